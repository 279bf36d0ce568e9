// Camunda's Node.js SDK (@camunda8/sdk 8.8) against a node with `--auth oidc` and a real Keycloak
// (run.sh's `oidc` suite, tests/compat/oidc/run.sh: ZEEBE_ADDRESS, ZEEBE_REST_ADDRESS and the
// SDK's own CAMUNDA_AUTH_STRATEGY=OAUTH, ZEEBE_CLIENT_ID / _SECRET, CAMUNDA_OAUTH_URL): the
// zero-conf `new Camunda8()` fetches a client-credentials token, deploys, creates an instance
// and completes its job over gRPC and over REST; without a token (CAMUNDA_AUTH_STRATEGY=NONE)
// each is refused (UNAUTHENTICATED, 401). Skipped in the other suites.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'

import { grpcDeployCreateComplete, httpStatus, rejection, restDeployCreateComplete } from './harness.js'

const GRPC_UNAUTHENTICATED = 16
const skip = process.env.CAMUNDA_AUTH_STRATEGY === 'OAUTH' && process.env.ZEEBE_CLIENT_ID
  ? false
  : 'run by the oidc suite (CAMUNDA_AUTH_STRATEGY=OAUTH and a node with --auth oidc)'

let Camunda8
let c8
let config

before(async () => {
  if (skip) return
  if (!process.env.ZEEBE_ADDRESS || !process.env.ZEEBE_REST_ADDRESS) {
    throw new Error('set ZEEBE_ADDRESS=host:port and ZEEBE_REST_ADDRESS=http://host:port of a node with --auth oidc')
  }
  config = {
    ZEEBE_GRPC_ADDRESS: `grpc://${process.env.ZEEBE_ADDRESS}`,
    ZEEBE_REST_ADDRESS: process.env.ZEEBE_REST_ADDRESS,
    CAMUNDA_LOG_LEVEL: process.env.CAMUNDA_LOG_LEVEL ?? 'error',
    ZEEBE_CLIENT_LOG_LEVEL: 'NONE',
  }
  ;({ Camunda8 } = await import('@camunda8/sdk'))
  // the credentials come from the environment, as the SDK's docs configure them
  c8 = new Camunda8(config)
})

after(() => {
  // the SDK keeps a worker's last long poll armed for its timeout; don't wait for it
  setTimeout(() => process.exit(), 1000).unref()
})

/** A client without credentials (the rest of its configuration from the environment). */
const anonymous = () => new Camunda8({ ...config, CAMUNDA_AUTH_STRATEGY: 'NONE' })

test('gRPC with an OAuth token: deploy, create, a worker completes the job', { skip, timeout: 30_000 }, async () => {
  await grpcDeployCreateComplete(c8.getZeebeGrpcApiClient(), 'oidc_grpc')
})

test('gRPC without a token: UNAUTHENTICATED', { skip, timeout: 30_000 }, async () => {
  const zbc = anonymous().getZeebeGrpcApiClient()
  try {
    const err = await rejection(zbc.topology())
    assert.equal(err.code, GRPC_UNAUTHENTICATED, String(err))
  } finally {
    await zbc.close()
  }
})

test('REST with an OAuth token: deploy, create, activate and complete the job', { skip, timeout: 30_000 }, async () => {
  await restDeployCreateComplete(c8.getCamundaRestClient(), 'oidc_rest')
})

test('REST without a token: 401', { skip, timeout: 30_000 }, async () => {
  const err = await rejection(anonymous().getCamundaRestClient().getTopology())
  assert.equal(httpStatus(err), 401, String(err))
})
