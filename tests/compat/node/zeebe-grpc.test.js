// Camunda's Node.js SDK (@camunda8/sdk 8.8) against the server, the way its docs teach a new
// user: the zero-conf `new Camunda8()` configured by environment variables, its Zeebe gRPC
// client with the SDK's defaults, plaintext and no auth. The SDK sends every gRPC request
// gzip-compressed (grpc.default_compression_algorithm 2), so each call here is a compressed one.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

import { acquireServer, model } from './harness.js'

const GRPC = { NOT_FOUND: 5, FAILED_PRECONDITION: 9 }

let server
let zbc

before(async () => {
  server = await acquireServer()
  // what a user exports for a local engine without auth (the SDK's README, "Zero-conf")
  process.env.ZEEBE_GRPC_ADDRESS = `grpc://${server.grpc}`
  if (server.rest) process.env.ZEEBE_REST_ADDRESS = server.rest
  process.env.CAMUNDA_AUTH_STRATEGY = 'NONE'
  process.env.CAMUNDA_LOG_LEVEL ??= 'error' // the SDK's info lines would drown the test output
  process.env.ZEEBE_CLIENT_LOG_LEVEL ??= 'NONE'
  const { Camunda8 } = await import('@camunda8/sdk')
  zbc = new Camunda8().getZeebeGrpcApiClient()
})

after(async () => {
  await zbc?.close()
  await server?.stop()
  // The SDK leaves the client-side timer of a worker's last long poll (its requestTimeout + 1 s,
  // 51 s by default) armed when the worker closes, which keeps the process alive that long
  // (GrpcClient.js clears it only on the stream's 'end'). Once the tests are done, don't wait.
  setTimeout(() => process.exit(), 1000).unref()
})

/** Deploys the model from its file (the form the SDK's docs show), returns its process id. */
async function deploy(name) {
  const m = model(name)
  const res = await zbc.deployResource({ processFilename: m.path })
  assert.equal(res.deployments.length, 1, JSON.stringify(res))
  assert.equal(res.deployments[0].process.bpmnProcessId, m.id)
  return m.id
}

/** The rejection of `promise`, which must reject. */
async function rejection(promise) {
  try {
    await promise
  } catch (e) {
    return e
  }
  assert.fail('expected a rejection')
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

test('topology: the first call a new user makes', { timeout: 20_000 }, async () => {
  const t = await zbc.topology()
  assert.ok(t.brokers.length >= 1, JSON.stringify(t))
  assert.ok(t.partitionsCount >= 1, JSON.stringify(t))
  assert.ok(t.brokers[0].partitions.some((p) => p.role === 'LEADER'), JSON.stringify(t))
})

test('deployResource: a BPMN file, and the same model changed from a buffer as a new version', { timeout: 20_000 }, async () => {
  const m = model('simple_task.bpmn')
  const first = await zbc.deployResource({ processFilename: m.path })
  const p1 = first.deployments[0].process
  assert.equal(p1.bpmnProcessId, m.id)
  assert.equal(p1.version, 1)
  assert.equal(p1.resourceName, m.path) // the SDK sends the file's path as its name
  const xml = m.xml.replace('name="Simple task"', 'name="Simple task v2"')
  assert.notEqual(xml, m.xml)
  const second = await zbc.deployResource({ name: `${m.id}.bpmn`, process: Buffer.from(xml) })
  const p2 = second.deployments[0].process
  assert.equal(p2.bpmnProcessId, m.id)
  assert.equal(p2.version, 2)
  assert.notEqual(p2.processDefinitionKey, p1.processDefinitionKey)
  // the same again is no new version
  const third = await zbc.deployResource({ name: `${m.id}.bpmn`, process: Buffer.from(xml) })
  assert.equal(third.deployments[0].process.version, 2)
  assert.equal(third.deployments[0].process.processDefinitionKey, p2.processDefinitionKey)
})

test('deployResource: an invalid model is rejected with the reason', { timeout: 20_000 }, async () => {
  const err = await rejection(zbc.deployResource({ name: 'malformed.bpmn', process: readFileSync(new URL('../testdata/malformed.bpmn', import.meta.url)) }))
  assert.equal(err.code, 3, String(err)) // INVALID_ARGUMENT
  assert.match(err.message, /malformed\.bpmn/)
})

test('createProcessInstance, and a worker completing its job with the result', { timeout: 30_000 }, async () => {
  const id = await deploy('service_task.bpmn')
  const created = await zbc.createProcessInstance({ bpmnProcessId: id, variables: { amount: 41 } })
  assert.equal(created.bpmnProcessId, id)
  assert.equal(created.version, 1)
  assert.match(created.processInstanceKey, /^\d+$/)

  const seen = []
  const worker = zbc.createWorker({
    taskType: `${id}.work`,
    taskHandler: (job) => {
      seen.push({ key: job.key, pi: job.processInstanceKey, vars: job.variables, headers: job.customHeaders })
      return job.complete({ resultValue: `done ${job.variables.amountPlusOne}` })
    },
  })
  try {
    // create-with-result answers once the worker completed the instance's job
    const result = await zbc.createProcessInstanceWithResult({
      bpmnProcessId: id, variables: { amount: 1 }, requestTimeout: 20_000,
    })
    assert.equal(result.bpmnProcessId, id)
    assert.deepEqual(result.variables, { amount: 1, finalValue: 'done 2' })
    for (let i = 0; i < 100 && seen.length < 2; i++) await sleep(50)
  } finally {
    await worker.close()
  }
  assert.equal(seen.length, 2, JSON.stringify(seen))
  const first = seen.find((s) => s.pi === created.processInstanceKey)
  assert.ok(first, JSON.stringify(seen))
  assert.equal(first.vars.localAmount, 41)
  assert.equal(first.vars.amountPlusOne, 42)
  assert.deepEqual({ ...first.headers }, { region: 'eu-west', priority: 'high' })
})

test('publishMessage correlates to a waiting instance', { timeout: 30_000 }, async () => {
  const id = await deploy('receive_message.bpmn')
  const orderId = `order-${id}`
  const done = zbc.createProcessInstanceWithResult({
    bpmnProcessId: id, variables: { orderId }, requestTimeout: 20_000,
  })
  // another instance waits on another key and is not touched
  const other = await zbc.createProcessInstance({ bpmnProcessId: id, variables: { orderId: `${orderId}-other` } })
  await sleep(200) // both wait at their receive task
  const published = await zbc.publishMessage({
    name: `${id}-paid`, correlationKey: orderId, variables: { paid: 42 }, timeToLive: 10_000,
  })
  assert.match(published.key, /^\d+$/)
  const result = await done
  assert.deepEqual(result.variables, { orderId, paid: 42 })
  await zbc.cancelProcessInstance(other.processInstanceKey) // still waiting: cancellable
})

test('setVariables on an instance: its next job sees them', { timeout: 30_000 }, async () => {
  const id = await deploy('simple_task.bpmn')
  const created = await zbc.createProcessInstance({ bpmnProcessId: id, variables: { n: 1, note: 'created' } })
  const set = await zbc.setVariables({
    elementInstanceKey: created.processInstanceKey, variables: { note: 'set', extra: [1, 2] }, local: false,
  })
  assert.match(set.key, /^\d+$/, JSON.stringify(set))
  const jobs = await zbc.activateJobs({ type: `${id}.task`, worker: 'node-test', maxJobsToActivate: 1, timeout: 30_000, requestTimeout: 10_000 })
  assert.equal(jobs.length, 1, JSON.stringify(jobs))
  assert.deepEqual({ ...jobs[0].variables }, { n: 1, note: 'set', extra: [1, 2] })
  await zbc.completeJob({ jobKey: jobs[0].key, variables: {} })
  // an element instance that does not exist
  const err = await rejection(zbc.setVariables({ elementInstanceKey: ((1n << 51n) + (1n << 40n)).toString(), variables: { x: 1 } }))
  assert.equal(err.code, GRPC.NOT_FOUND, String(err))
})

test('failJob down to 0 retries raises an incident; resolveIncident after updateJobRetries lets the job run again', { timeout: 40_000 }, async () => {
  const id = await deploy('simple_task.bpmn')
  const type = `${id}.task`
  const done = zbc.createProcessInstanceWithResult({ bpmnProcessId: id, variables: { n: 1 }, requestTimeout: 30_000 })

  // a worker that fails each attempt with one retry less, as the SDK's docs show
  const attempts = []
  const worker = zbc.createWorker({
    taskType: type,
    taskHandler: (job) => {
      attempts.push({ key: job.key, retries: job.retries })
      return job.fail({ errorMessage: `boom ${job.retries}`, retries: job.retries - 1 })
    },
  })
  try {
    for (let i = 0; i < 200 && attempts.length < 3; i++) await sleep(50)
    await sleep(1000) // no 4th attempt may follow: the job waits in its incident
  } finally {
    await worker.close()
  }
  assert.deepEqual(attempts.map((a) => a.retries), [3, 2, 1], JSON.stringify(attempts))
  const jobKey = attempts[0].key
  assert.ok(attempts.every((a) => a.key === jobKey), JSON.stringify(attempts))

  // The gRPC API lists no incidents; the incident's key comes a little after the job's on the
  // same partition (see the Go suite's resolveIncidentAfter). ResolveIncident answers NOT_FOUND
  // for other keys, and FAILED_PRECONDITION for the incident while the job has no retries.
  let incidentKey
  for (let k = BigInt(jobKey) + 1n; k <= BigInt(jobKey) + 200n && !incidentKey; k++) {
    const err = await rejection(zbc.resolveIncident({ incidentKey: k.toString() }))
    if (err.code === GRPC.NOT_FOUND) continue
    assert.equal(err.code, GRPC.FAILED_PRECONDITION, String(err))
    assert.match(err.message, /no retries left/)
    incidentKey = k.toString()
  }
  assert.ok(incidentKey, 'no incident found among the 200 keys after the job')

  await zbc.updateJobRetries({ jobKey, retries: 1 })
  await zbc.resolveIncident({ incidentKey })
  const jobs = await zbc.activateJobs({ type, worker: 'node-test', maxJobsToActivate: 5, timeout: 30_000, requestTimeout: 10_000 })
  assert.equal(jobs.length, 1, JSON.stringify(jobs))
  assert.equal(jobs[0].key, jobKey)
  assert.equal(jobs[0].retries, 1)
  await zbc.completeJob({ jobKey, variables: { fixed: true } })
  assert.deepEqual((await done).variables, { n: 1, fixed: true })
  // resolved once: a second resolve is NOT_FOUND
  const again = await rejection(zbc.resolveIncident({ incidentKey }))
  assert.equal(again.code, GRPC.NOT_FOUND, String(again))
})

test('cancelProcessInstance ends an instance: its job can no longer be completed', { timeout: 30_000 }, async () => {
  const id = await deploy('simple_task.bpmn')
  const created = await zbc.createProcessInstance({ bpmnProcessId: id, variables: {} })
  const jobs = await zbc.activateJobs({ type: `${id}.task`, worker: 'node-test', maxJobsToActivate: 1, timeout: 30_000, requestTimeout: 10_000 })
  assert.equal(jobs.length, 1, JSON.stringify(jobs))
  assert.equal(jobs[0].processInstanceKey, created.processInstanceKey)
  await zbc.cancelProcessInstance(created.processInstanceKey)
  const err = await rejection(zbc.completeJob({ jobKey: jobs[0].key, variables: {} }))
  assert.equal(err.code, GRPC.NOT_FOUND, String(err))
  const again = await rejection(zbc.cancelProcessInstance(created.processInstanceKey))
  assert.equal(again.code, GRPC.NOT_FOUND, String(again))
})
