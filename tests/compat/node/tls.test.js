// Camunda's Node.js SDK over TLS (issue 62): a zest started with a certificate made for the run
// (Camunda 8.8's own variables for the gateway's TLS), and the SDK given the CA the way its docs
// say, CAMUNDA_CUSTOM_ROOT_CERT_PATH, with grpcs:// and https:// addresses: a deployment, an
// instance created with its result, its job completed by a worker, and the REST API's topology.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { acquireServer, makeCerts, model } from './harness.js'

const external = Boolean(process.env.ZEEBE_ADDRESS)
let dir
let server
let c8

before(async () => {
  if (external) return
  dir = mkdtempSync(join(tmpdir(), 'zest-node-tls-'))
  const certs = makeCerts(dir)
  process.env.CAMUNDA_API_GRPC_SSL_ENABLED = 'true'
  process.env.CAMUNDA_API_GRPC_SSL_CERTIFICATE = certs.cert
  process.env.CAMUNDA_API_GRPC_SSL_CERTIFICATEPRIVATEKEY = certs.key
  server = await acquireServer({ tls: true })
  process.env.ZEEBE_GRPC_ADDRESS = `grpcs://${server.grpc}`
  process.env.ZEEBE_REST_ADDRESS = server.rest
  process.env.CAMUNDA_CUSTOM_ROOT_CERT_PATH = certs.ca
  process.env.CAMUNDA_AUTH_STRATEGY = 'NONE'
  process.env.CAMUNDA_LOG_LEVEL ??= 'error'
  process.env.ZEEBE_CLIENT_LOG_LEVEL ??= 'NONE'
  const { Camunda8 } = await import('@camunda8/sdk')
  c8 = new Camunda8()
})

after(async () => {
  await server?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
  // the SDK's last long poll keeps a timer armed (see zeebe-grpc.test.js)
  setTimeout(() => process.exit(), 1000).unref()
})

test('gRPC over TLS: deploy, create with result, a worker completes the job', { timeout: 30_000, skip: external && 'starts zest with its own certificate' }, async () => {
  const zbc = c8.getZeebeGrpcApiClient()
  const m = model('simple_task.bpmn')
  const deployed = await zbc.deployResource({ processFilename: m.path })
  assert.equal(deployed.deployments[0].process.bpmnProcessId, m.id)
  const worker = zbc.createWorker({
    taskType: `${m.id}.task`,
    taskHandler: (job) => job.complete({ paid: true }),
  })
  try {
    const result = await zbc.createProcessInstanceWithResult({
      bpmnProcessId: m.id, variables: { orderId: 'T-1' }, requestTimeout: 20_000,
    })
    assert.equal(result.bpmnProcessId, m.id)
    assert.deepEqual(result.variables, { orderId: 'T-1', paid: true })
  } finally {
    await worker.close()
    await zbc.close()
  }
})

test('REST over TLS with the same certificate: the topology', { timeout: 20_000, skip: external && 'starts zest with its own certificate' }, async () => {
  const t = await c8.getCamundaRestClient().getTopology()
  assert.ok(t.brokers.length >= 1, JSON.stringify(t))
})
