// Camunda's Node.js SDK (@camunda8/sdk 8.8) against a node with `--auth basic` (run.sh's `auth`
// suite: ZEEBE_ADDRESS, ZEEBE_REST_ADDRESS and the SDK's own CAMUNDA_AUTH_STRATEGY=BASIC,
// CAMUNDA_BASIC_AUTH_USERNAME / _PASSWORD): the zero-conf `new Camunda8()` deploys, creates an
// instance and completes its job over gRPC and over REST; with a wrong password each is refused
// (UNAUTHENTICATED, 401). Skipped in the other suites, whose nodes have no authentication.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'

import { grpcDeployCreateComplete, httpStatus, rejection, restDeployCreateComplete } from './harness.js'

const GRPC_UNAUTHENTICATED = 16
const skip = process.env.CAMUNDA_BASIC_AUTH_USERNAME
  ? false
  : 'run by the auth suite (CAMUNDA_BASIC_AUTH_USERNAME and a node with --auth basic)'

let Camunda8
let c8
let config

before(async () => {
  if (skip) return
  if (!process.env.ZEEBE_ADDRESS || !process.env.ZEEBE_REST_ADDRESS) {
    throw new Error('set ZEEBE_ADDRESS=host:port and ZEEBE_REST_ADDRESS=http://host:port of a node with --auth basic')
  }
  config = {
    ZEEBE_GRPC_ADDRESS: `grpc://${process.env.ZEEBE_ADDRESS}`,
    ZEEBE_REST_ADDRESS: process.env.ZEEBE_REST_ADDRESS,
    CAMUNDA_LOG_LEVEL: process.env.CAMUNDA_LOG_LEVEL ?? 'error',
    ZEEBE_CLIENT_LOG_LEVEL: 'NONE',
  }
  process.env.CAMUNDA_AUTH_STRATEGY ??= 'BASIC'
  ;({ Camunda8 } = await import('@camunda8/sdk'))
  // the credentials come from the environment, as the SDK's docs configure them
  c8 = new Camunda8(config)
})

after(() => {
  // the SDK keeps a worker's last long poll armed for its timeout; don't wait for it
  setTimeout(() => process.exit(), 1000).unref()
})

/** A client with a wrong password (the rest of its configuration from the environment). */
const wrong = () => new Camunda8({
  ...config,
  CAMUNDA_AUTH_STRATEGY: 'BASIC',
  CAMUNDA_BASIC_AUTH_USERNAME: process.env.CAMUNDA_BASIC_AUTH_USERNAME,
  CAMUNDA_BASIC_AUTH_PASSWORD: 'not the password',
})

test('gRPC with Basic credentials: deploy, create, a worker completes the job', { skip, timeout: 30_000 }, async () => {
  await grpcDeployCreateComplete(c8.getZeebeGrpcApiClient(), 'auth_grpc')
})

test('gRPC with a wrong password: UNAUTHENTICATED', { skip, timeout: 30_000 }, async () => {
  const zbc = wrong().getZeebeGrpcApiClient()
  try {
    const err = await rejection(zbc.topology())
    assert.equal(err.code, GRPC_UNAUTHENTICATED, String(err))
  } finally {
    await zbc.close()
  }
})

test('REST with Basic credentials: deploy, create, activate and complete the job', { skip, timeout: 30_000 }, async () => {
  await restDeployCreateComplete(c8.getCamundaRestClient(), 'auth_rest')
})

test('REST with a wrong password: 401', { skip, timeout: 30_000 }, async () => {
  const err = await rejection(wrong().getCamundaRestClient().getTopology())
  assert.equal(httpStatus(err), 401, String(err))
})
