// Camunda's Node.js SDK (@camunda8/sdk 8.8) against a node with `--auth oidc` and a real Keycloak
// (run.sh's `oidc` suite, tests/compat/oidc/run.sh: ZEEBE_ADDRESS, ZEEBE_REST_ADDRESS and the
// SDK's own CAMUNDA_AUTH_STRATEGY=OAUTH, ZEEBE_CLIENT_ID / _SECRET, CAMUNDA_OAUTH_URL): the
// zero-conf `new Camunda8()` fetches a client-credentials token, deploys, creates an instance
// and completes its job over gRPC and over REST; without a token (CAMUNDA_AUTH_STRATEGY=NONE)
// each is refused (UNAUTHENTICATED, 401). Skipped in the other suites.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'

import { model } from './harness.js'

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

async function rejection(promise) {
  try {
    await promise
  } catch (e) {
    return e
  }
  assert.fail('expected a rejection')
}

test('gRPC with an OAuth token: deploy, create, a worker completes the job', { skip, timeout: 30_000 }, async () => {
  const zbc = c8.getZeebeGrpcApiClient()
  const m = model('service_task.bpmn', 'oidc_grpc')
  const deployed = await zbc.deployResource({ processFilename: m.path })
  assert.equal(deployed.deployments[0].process.bpmnProcessId, m.id)
  const worker = zbc.createWorker({
    taskType: `${m.id}.work`,
    taskHandler: (job) => job.complete({ resultValue: 'done' }),
  })
  try {
    const result = await zbc.createProcessInstanceWithResult({
      bpmnProcessId: m.id, variables: { amount: 1 }, requestTimeout: 20_000,
    })
    assert.equal(result.bpmnProcessId, m.id)
    assert.equal(result.variables.finalValue, 'done')
  } finally {
    await worker.close()
    await zbc.close()
  }
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
  const rest = c8.getCamundaRestClient()
  const m = model('simple_task.bpmn', 'oidc_rest')
  const deployed = await rest.deployResourcesFromFiles([m.path])
  assert.equal(deployed.processes[0].processDefinitionId, m.id)
  const created = await rest.createProcessInstance({ processDefinitionId: m.id, variables: { n: 1 } })
  const jobs = await rest.activateJobs({ type: `${m.id}.task`, maxJobsToActivate: 1, timeout: 30_000, worker: 'node-oidc' })
  assert.equal(jobs.length, 1, JSON.stringify(jobs))
  assert.equal(jobs[0].processInstanceKey, created.processInstanceKey)
  await rest.completeJob({ jobKey: jobs[0].jobKey })
})

test('REST without a token: 401', { skip, timeout: 30_000 }, async () => {
  const err = await rejection(anonymous().getCamundaRestClient().getTopology())
  const status = err.statusCode ?? err.response?.statusCode ?? err.cause?.response?.statusCode
  assert.equal(status, 401, String(err))
})
