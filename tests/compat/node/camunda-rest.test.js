// Camunda's Node.js SDK (@camunda8/sdk 8.8) over REST: the zero-conf `new Camunda8()` configured
// by environment variables (ZEEBE_REST_ADDRESS, CAMUNDA_AUTH_STRATEGY=NONE) and its
// `getCamundaRestClient()`, the REST client its docs teach for the Camunda 8 REST API (it calls
// `${ZEEBE_REST_ADDRESS}/v2/...` through got, parsing int64 keys losslessly). Its searches read
// the history, which a command reaches a moment later (Camunda calls them eventually
// consistent), so the tests poll them.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'

import { acquireServer, model } from './harness.js'

let server
let rest

before(async () => {
  server = await acquireServer()
  if (!server.rest) throw new Error('set ZEEBE_REST_ADDRESS=http://host:port with ZEEBE_ADDRESS')
  process.env.ZEEBE_REST_ADDRESS = server.rest
  process.env.ZEEBE_GRPC_ADDRESS = `grpc://${server.grpc}`
  process.env.CAMUNDA_AUTH_STRATEGY = 'NONE'
  process.env.CAMUNDA_LOG_LEVEL ??= 'error'
  const { Camunda8 } = await import('@camunda8/sdk')
  rest = new Camunda8().getCamundaRestClient()
})

after(async () => {
  rest?.stopWorkers()
  await server?.stop()
})

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Calls `search` until `predicate(result)` holds (at most 10 s), returns the last result. */
async function eventually(search, predicate) {
  let last
  for (let i = 0; i < 100; i++) {
    last = await search()
    if (predicate(last)) return last
    await sleep(100)
  }
  assert.fail(`not within 10 s: ${JSON.stringify(last)}`)
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

/** Deploys the model from its file, returns { id, key }. */
async function deploy(name) {
  const m = model(name)
  const res = await rest.deployResourcesFromFiles([m.path])
  assert.equal(res.processes.length, 1, JSON.stringify(res))
  assert.equal(res.processes[0].processDefinitionId, m.id)
  assert.equal(res.processes[0].processDefinitionVersion, 1)
  return { id: m.id, key: res.processes[0].processDefinitionKey }
}

const instance = (processInstanceKey) => () => rest.searchProcessInstances({ filter: { processInstanceKey } })

test('getTopology', { timeout: 20_000 }, async () => {
  const t = await rest.getTopology()
  assert.ok(t.brokers.length >= 1, JSON.stringify(t))
  assert.ok(t.partitionsCount >= 1, JSON.stringify(t))
})

test('createProcessInstanceWithResult, completed by the REST job worker', { timeout: 30_000 }, async () => {
  const { id } = await deploy('service_task.bpmn')
  const seen = []
  const worker = rest.createJobWorker({
    type: `${id}.work`,
    maxJobsToActivate: 2,
    timeout: 30_000,
    worker: 'node-rest',
    jobHandler: (job) => {
      seen.push({ pi: job.processInstanceKey, vars: job.variables, headers: job.customHeaders })
      return job.complete({ resultValue: `done ${job.variables.amountPlusOne}` })
    },
  })
  try {
    const result = await rest.createProcessInstanceWithResult({
      processDefinitionId: id, variables: { amount: 41 }, requestTimeout: 20_000,
    })
    assert.equal(result.processDefinitionId, id)
    assert.deepEqual({ ...result.variables }, { amount: 41, finalValue: 'done 42' })
    assert.equal(seen.length, 1, JSON.stringify(seen))
    assert.equal(seen[0].pi, result.processInstanceKey)
    assert.equal(seen[0].vars.localAmount, 41)
    assert.deepEqual({ ...seen[0].headers }, { region: 'eu-west', priority: 'high' })
    const found = await eventually(instance(result.processInstanceKey), (r) => r.items[0]?.state === 'COMPLETED')
    assert.equal(found.items[0].processDefinitionId, id)
  } finally {
    worker.stop()
  }
})

test('createProcessInstance, activateJobs, completeJob: the instance is found COMPLETED', { timeout: 30_000 }, async () => {
  const { id, key } = await deploy('simple_task.bpmn')
  const created = await rest.createProcessInstance({ processDefinitionKey: key, variables: { n: 1 } })
  assert.equal(created.processDefinitionId, id)
  assert.match(created.processInstanceKey, /^\d+$/)
  const active = await eventually(instance(created.processInstanceKey), (r) => r.items.length === 1)
  assert.equal(active.items[0].state, 'ACTIVE')

  const jobs = await rest.activateJobs({ type: `${id}.task`, maxJobsToActivate: 5, timeout: 30_000, worker: 'node-rest' })
  assert.equal(jobs.length, 1, JSON.stringify(jobs))
  assert.equal(jobs[0].processInstanceKey, created.processInstanceKey)
  assert.deepEqual({ ...jobs[0].variables }, { n: 1 })
  await rest.completeJob({ jobKey: jobs[0].jobKey, variables: { m: 2 } })
  await eventually(instance(created.processInstanceKey), (r) => r.items[0]?.state === 'COMPLETED')
  const vars = await eventually(
    () => rest.searchVariables({ filter: { processInstanceKey: created.processInstanceKey, name: 'm' } }),
    (r) => r.items.length === 1)
  assert.equal(vars.items[0].value, '2')
})

test('failJob to 0 retries: searchIncidents finds it; updateJob, resolveIncident, and the job runs again', { timeout: 40_000 }, async () => {
  const { id } = await deploy('simple_task.bpmn')
  const created = await rest.createProcessInstance({ processDefinitionId: id, variables: {} })
  const jobs = await rest.activateJobs({ type: `${id}.task`, maxJobsToActivate: 1, timeout: 30_000, worker: 'node-rest' })
  assert.equal(jobs.length, 1, JSON.stringify(jobs))
  const { jobKey } = jobs[0]
  await rest.failJob({ jobKey, retries: 0, errorMessage: 'boom' })
  const incidents = await eventually(
    () => rest.searchIncidents({ filter: { processInstanceKey: created.processInstanceKey } }),
    (r) => r.items.length === 1)
  const inc = incidents.items[0]
  assert.equal(inc.state, 'ACTIVE')
  assert.equal(inc.errorType, 'JOB_NO_RETRIES')
  assert.equal(inc.errorMessage, 'boom')
  assert.equal(inc.jobKey, jobKey)

  await rest.updateJob({ jobKey, retries: 1 }) // the SDK wraps it in { changeset }
  await rest.resolveIncident(inc.incidentKey)
  const again = await rest.activateJobs({ type: `${id}.task`, maxJobsToActivate: 1, timeout: 30_000, worker: 'node-rest' })
  assert.equal(again.length, 1, JSON.stringify(again))
  assert.equal(again[0].jobKey, jobKey)
  assert.equal(again[0].retries, 1)
  await rest.completeJob({ jobKey })
  await eventually(instance(created.processInstanceKey), (r) => r.items[0]?.state === 'COMPLETED')
  await eventually(() => rest.searchIncidents({ filter: { incidentKey: inc.incidentKey } }),
    (r) => r.items[0]?.state === 'RESOLVED')
})

test('publishMessage and correlateMessage reach the instance waiting on their key', { timeout: 30_000 }, async () => {
  const { id } = await deploy('receive_message.bpmn')
  const orderId = `order-${id}`
  const a = await rest.createProcessInstance({ processDefinitionId: id, variables: { orderId } })
  const b = await rest.createProcessInstance({ processDefinitionId: id, variables: { orderId: `${orderId}-b` } })
  const other = await rest.createProcessInstance({ processDefinitionId: id, variables: { orderId: `${orderId}-other` } })
  await sleep(200) // all three wait at their receive task

  const published = await rest.publishMessage({ name: `${id}-paid`, correlationKey: orderId, variables: { paid: 42 }, timeToLive: 10_000 })
  assert.match(published.messageKey, /^\d+$/)
  const correlated = await rest.correlateMessage({ name: `${id}-paid`, correlationKey: `${orderId}-b`, variables: { paid: 7 } })
  assert.equal(correlated.processInstanceKey, b.processInstanceKey)
  for (const [pi, paid] of [[a.processInstanceKey, '42'], [b.processInstanceKey, '7']]) {
    await eventually(instance(pi), (r) => r.items[0]?.state === 'COMPLETED')
    const vars = await eventually(() => rest.searchVariables({ filter: { processInstanceKey: pi, name: 'paid' } }),
      (r) => r.items.length === 1)
    assert.equal(vars.items[0].value, paid)
  }
  const waiting = await eventually(instance(other.processInstanceKey), (r) => r.items.length === 1)
  assert.equal(waiting.items[0].state, 'ACTIVE')
  await rest.cancelProcessInstance({ processInstanceKey: other.processInstanceKey })
  await eventually(instance(other.processInstanceKey), (r) => r.items[0]?.state === 'TERMINATED')
  const err = await rejection(rest.correlateMessage({ name: `${id}-paid`, correlationKey: 'nobody' }))
  assert.equal(err.statusCode, 404, String(err))
})

test('user tasks: searchUserTasks, assignUserTask, completeUserTask', { timeout: 30_000 }, async (t) => {
  const { id } = await deploy('c8ctl_user_task.bpmn')
  const created = await rest.createProcessInstance({ processDefinitionId: id, variables: { x: 1 } })
  const tasks = await eventually(
    () => rest.searchUserTasks({ filter: { processInstanceKey: created.processInstanceKey } }),
    (r) => r.items.length === 1)
  const task = tasks.items[0]
  assert.equal(task.state, 'CREATED')
  assert.equal(task.elementId, 'review')
  assert.equal(task.assignee ?? undefined, undefined) // unassigned

  await rest.assignUserTask({ userTaskKey: task.userTaskKey, assignee: 'demo' })
  const assigned = await eventually(
    () => rest.searchUserTasks({ filter: { userTaskKey: task.userTaskKey } }),
    (r) => r.items[0]?.assignee === 'demo')
  assert.equal(assigned.items[0].state, 'CREATED')

  await rest.completeUserTask({ userTaskKey: task.userTaskKey, variables: { approved: true } })
  await eventually(instance(created.processInstanceKey), (r) => r.items[0]?.state === 'COMPLETED')
  const vars = await eventually(
    () => rest.searchVariables({ filter: { processInstanceKey: created.processInstanceKey, name: 'approved' } }),
    (r) => r.items.length === 1)
  assert.equal(vars.items[0].value, 'true')
  // the instance is found COMPLETED, so is its task (written before it)
  await t.test('the completed task is found COMPLETED', async () => {
    const done = await rest.searchUserTasks({ filter: { userTaskKey: task.userTaskKey } })
    assert.equal(done.items[0]?.state, 'COMPLETED', JSON.stringify(done))
  })
})
