// Camunda's official JavaScript SDK for the REST API v2, `@camunda8/orchestration-cluster-api`
// (8.8.x: "SDK major n -> Camunda 8.n"), as its README teaches: the zero-config
// `createCamundaClient()` reading CAMUNDA_* from the environment, with response validation
// strict (CAMUNDA_SDK_VALIDATION=res:strict), so every response is checked against Camunda's spec
// and a violation fails the call with an error naming the operation and the field. (Request
// validation strict in 8.8.4 coerces int64 fields to BigInt: createProcessInstance then sends
// `"requestTimeout": "0"`, which Zest reads as Camunda does, but failJob throws "Do not know how to
// serialize a BigInt" in the SDK before sending; OCA_VALIDATION overrides the mode.)
//
// The SDK's eventually consistent operations (every search and get that reads the history) take a
// second, required argument `{ consistency: { waitUpToMs } }` (README, "Eventual Consistency
// Polling"; the .d.ts marks it required); called without it they throw "Missing
// consistencyManagement parameter for eventually consistent endpoint" before any request. With
// waitUpToMs > 0 the SDK polls until the predicate holds (by default: a non-empty `items`).
//
// KNOWN lists the spec violations of Zest's history searches that are not fixed yet (none now):
// a read that fails strict validation with only those is recorded and read again without
// validation, so the tests still check what the user sees, and the test at the end fails on what
// was recorded. Any other violation fails its test.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'

import { acquireServer, model } from './harness.js'

const VALIDATION = process.env.OCA_VALIDATION ?? 'res:strict'
/** Violations of Camunda's spec in Zest's history searches, not fixed yet: [issue pattern, why]. */
const KNOWN = [] // none left (page cursors are padded base64 since the schemathesis suite)
/** { op, input, issues } of each read that violated the spec only in KNOWN ways. */
const violations = []
const WAIT = { consistency: { waitUpToMs: 10_000, pollIntervalMs: 100 } }
/** Polls until `predicate(result)` holds, at most 10 s. */
const until = (predicate) => ({ consistency: { waitUpToMs: 10_000, pollIntervalMs: 100, predicate } })

let server
let camunda
let unvalidated // the same client without response validation, for reads that hit KNOWN

before(async () => {
  server = await acquireServer()
  if (!server.rest) throw new Error('set ZEEBE_REST_ADDRESS=http://host:port with ZEEBE_ADDRESS')
  process.env.CAMUNDA_REST_ADDRESS = server.rest
  process.env.CAMUNDA_AUTH_STRATEGY = 'NONE'
  process.env.CAMUNDA_SDK_VALIDATION = VALIDATION
  process.env.CAMUNDA_SDK_LOG_LEVEL ??= 'silent' // strict failures are thrown, and reported here
  const { createCamundaClient } = await import('@camunda8/orchestration-cluster-api')
  camunda = createCamundaClient()
  unvalidated = createCamundaClient({ config: { CAMUNDA_SDK_VALIDATION: 'none' } })
})

/** `camunda[op](...args)` of a read, called again without validation when its response fails
 * strict validation with KNOWN violations only (recorded in `violations`). */
async function read(op, ...args) {
  try {
    return await camunda[op](...args)
  } catch (e) {
    const issues = Array.isArray(e.issues) && /response/.test(e.message) ? e.issues : null
    if (!issues || !issues.every((i) => KNOWN.some(([re]) => re.test(i)))) throw e
    violations.push({ op, input: args[0], issues })
    return unvalidated[op](...args)
  }
}

after(async () => {
  camunda?.stopAllWorkers()
  await server?.stop()
})

/** Deploys the model (a file, as `deployResourcesFromFiles` reads it), returns { id, key }. */
async function deploy(name) {
  const m = model(name)
  const res = await camunda.deployResourcesFromFiles([m.path])
  assert.equal(res.processes.length, 1, show(res))
  assert.equal(res.processes[0].processDefinitionId, m.id)
  assert.equal(res.processes[0].processDefinitionVersion, 1)
  return { id: m.id, key: res.processes[0].processDefinitionKey, xml: m.xml }
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

/** JSON of a response for an assertion's message (strict validation makes int64 counts BigInt). */
const show = (v) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x))

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

test('getTopology', { timeout: 20_000 }, async () => {
  const t = await camunda.getTopology()
  assert.ok(t.brokers.length >= 1, show(t))
  assert.ok(t.partitionsCount >= 1, show(t))
  assert.ok(t.brokers[0].partitions.some((p) => p.role === 'leader'), show(t))
})

test('deploy, then find the definition and its XML', { timeout: 30_000 }, async () => {
  const { id, key, xml } = await deploy('simple_task.bpmn')
  const defs = await read('searchProcessDefinitions', { filter: { processDefinitionId: id } }, WAIT)
  assert.equal(defs.items.length, 1, show(defs))
  assert.equal(defs.items[0].processDefinitionKey, key)
  assert.equal(defs.items[0].version, 1)
  assert.equal(defs.items[0].name, 'Simple task')
  const got = await read('getProcessDefinitionXml', { processDefinitionKey: key }, WAIT)
  assert.equal(got, xml)
})

test('createProcessInstance with awaitCompletion, completed by the REST job worker', { timeout: 30_000 }, async () => {
  const { id } = await deploy('service_task.bpmn')
  const seen = []
  const worker = camunda.createJobWorker({
    jobType: `${id}.work`,
    maxParallelJobs: 2,
    jobTimeoutMs: 30_000,
    pollTimeoutMs: 5_000,
    jobHandler: (job) => {
      seen.push({ pi: job.processInstanceKey, vars: job.variables, headers: job.customHeaders, retries: job.retries })
      return job.complete({ resultValue: `done ${job.variables.amountPlusOne}` })
    },
  })
  try {
    const result = await camunda.createProcessInstance({
      processDefinitionId: id, variables: { amount: 41 }, awaitCompletion: true, requestTimeout: 20_000,
    })
    assert.equal(result.processDefinitionId, id)
    assert.deepEqual(result.variables, { amount: 41, finalValue: 'done 42' })
    assert.equal(seen.length, 1, show(seen))
    assert.equal(seen[0].pi, result.processInstanceKey)
    assert.equal(seen[0].vars.localAmount, 41)
    assert.equal(seen[0].retries, 3)
    assert.deepEqual({ ...seen[0].headers }, { region: 'eu-west', priority: 'high' })

    // the instance is found COMPLETED, with its variable
    const found = await read('searchProcessInstances',
      { filter: { processInstanceKey: result.processInstanceKey } },
      until((r) => r.items.length === 1 && r.items[0].state === 'COMPLETED'),
    )
    assert.equal(found.items[0].processDefinitionId, id)
    assert.equal(found.items[0].hasIncident, false)
    const pi = await read('getProcessInstance', { processInstanceKey: result.processInstanceKey }, WAIT)
    assert.equal(pi.state, 'COMPLETED')
    assert.ok(pi.endDate, show(pi))
    const vars = await read('searchVariables',
      { filter: { processInstanceKey: result.processInstanceKey, name: 'finalValue' } }, WAIT)
    assert.equal(vars.items.length, 1, show(vars))
    assert.equal(vars.items[0].value, '"done 42"') // values are JSON text
  } finally {
    worker.stop()
  }
})

test('createProcessInstance without awaitCompletion; activateJobs and completeJob', { timeout: 30_000 }, async () => {
  const { id, key } = await deploy('simple_task.bpmn')
  const created = await camunda.createProcessInstance({ processDefinitionKey: key, variables: { n: 1 } })
  assert.equal(created.processDefinitionId, id)
  assert.equal(created.processDefinitionKey, key)
  assert.match(created.processInstanceKey, /^\d+$/)
  const active = await read('searchProcessInstances',
    { filter: { processDefinitionId: id, state: 'ACTIVE' } }, WAIT)
  assert.deepEqual(active.items.map((i) => i.processInstanceKey), [created.processInstanceKey])

  const act = await camunda.activateJobs({ type: `${id}.task`, maxJobsToActivate: 5, timeout: 30_000, worker: 'node-oca' })
  assert.equal(act.jobs.length, 1, show(act))
  const job = act.jobs[0]
  assert.equal(job.processInstanceKey, created.processInstanceKey)
  assert.deepEqual(job.variables, { n: 1 })
  await camunda.completeJob({ jobKey: job.jobKey, variables: { m: 2 } })
  const done = await read('searchProcessInstances',
    { filter: { processInstanceKey: created.processInstanceKey } },
    until((r) => r.items[0]?.state === 'COMPLETED'))
  assert.equal(done.items[0].state, 'COMPLETED')
  // a completed job cannot be completed again
  const err = await rejection(camunda.completeJob({ jobKey: job.jobKey }))
  assert.equal(err.status, 404, String(err))
})

test('failJob to 0 retries: the incident is found, resolved after updateJob, and the instance completes', { timeout: 40_000 }, async () => {
  const { id } = await deploy('simple_task.bpmn')
  const created = await camunda.createProcessInstance({ processDefinitionId: id, variables: {} })
  const act = await camunda.activateJobs({ type: `${id}.task`, maxJobsToActivate: 1, timeout: 30_000, worker: 'node-oca' })
  assert.equal(act.jobs.length, 1, show(act))
  const { jobKey } = act.jobs[0]
  await camunda.failJob({ jobKey, retries: 0, errorMessage: 'boom' })

  const incidents = await read('searchIncidents',
    { filter: { processInstanceKey: created.processInstanceKey } }, WAIT)
  assert.equal(incidents.items.length, 1, show(incidents))
  const inc = incidents.items[0]
  assert.equal(inc.state, 'ACTIVE')
  assert.equal(inc.errorType, 'JOB_NO_RETRIES')
  assert.equal(inc.errorMessage, 'boom')
  assert.equal(inc.jobKey, jobKey)
  const flagged = await read('searchProcessInstances',
    { filter: { processInstanceKey: created.processInstanceKey } },
    until((r) => r.items[0]?.hasIncident === true))
  assert.equal(flagged.items[0].state, 'ACTIVE')

  await camunda.updateJob({ jobKey, changeset: { retries: 1 } })
  await camunda.resolveIncident({ incidentKey: inc.incidentKey })
  const again = await camunda.activateJobs({ type: `${id}.task`, maxJobsToActivate: 1, timeout: 30_000, worker: 'node-oca' })
  assert.equal(again.jobs.length, 1, show(again))
  assert.equal(again.jobs[0].jobKey, jobKey)
  assert.equal(again.jobs[0].retries, 1)
  await camunda.completeJob({ jobKey })
  const resolved = await read('searchIncidents',
    { filter: { incidentKey: inc.incidentKey } }, until((r) => r.items[0]?.state === 'RESOLVED'))
  assert.equal(resolved.items[0].state, 'RESOLVED')
  const done = await read('searchProcessInstances',
    { filter: { processInstanceKey: created.processInstanceKey } },
    until((r) => r.items[0]?.state === 'COMPLETED'))
  assert.equal(done.items[0].hasIncident, false)
})

test('publishMessage and correlateMessage reach the instance waiting on their key', { timeout: 30_000 }, async () => {
  const { id } = await deploy('receive_message.bpmn')
  const orderId = `order-${id}`
  const a = await camunda.createProcessInstance({ processDefinitionId: id, variables: { orderId } })
  const b = await camunda.createProcessInstance({ processDefinitionId: id, variables: { orderId: `${orderId}-b` } })
  const other = await camunda.createProcessInstance({ processDefinitionId: id, variables: { orderId: `${orderId}-other` } })
  await sleep(200) // all three wait at their receive task

  const published = await camunda.publishMessage({
    name: `${id}-paid`, correlationKey: orderId, variables: { paid: 42 }, timeToLive: 10_000,
  })
  assert.match(published.messageKey, /^\d+$/)
  const correlated = await camunda.correlateMessage({ name: `${id}-paid`, correlationKey: `${orderId}-b`, variables: { paid: 7 } })
  assert.equal(correlated.processInstanceKey, b.processInstanceKey)

  for (const [pi, paid] of [[a.processInstanceKey, 42], [b.processInstanceKey, 7]]) {
    const done = await read('searchProcessInstances',
      { filter: { processInstanceKey: pi } }, until((r) => r.items[0]?.state === 'COMPLETED'))
    assert.equal(done.items[0].state, 'COMPLETED')
    const vars = await read('searchVariables', { filter: { processInstanceKey: pi, name: 'paid' } }, WAIT)
    assert.equal(vars.items[0]?.value, String(paid), show(vars))
  }
  // the instance waiting on another key is untouched: still ACTIVE, cancellable
  await camunda.cancelProcessInstance({ processInstanceKey: other.processInstanceKey })
  const cancelled = await read('searchProcessInstances',
    { filter: { processInstanceKey: other.processInstanceKey } }, until((r) => r.items[0]?.state === 'TERMINATED'))
  assert.equal(cancelled.items[0].state, 'TERMINATED')
  // nothing waits on this key: correlateMessage answers 404
  const err = await rejection(camunda.correlateMessage({ name: `${id}-paid`, correlationKey: 'nobody' }))
  assert.equal(err.status, 404, String(err))
})

test('user tasks: search, assign, complete', { timeout: 30_000 }, async (t) => {
  const { id } = await deploy('c8ctl_user_task.bpmn')
  const created = await camunda.createProcessInstance({ processDefinitionId: id, variables: { x: 1 } })
  const tasks = await read('searchUserTasks', { filter: { processInstanceKey: created.processInstanceKey } }, WAIT)
  assert.equal(tasks.items.length, 1, show(tasks))
  const task = tasks.items[0]
  assert.equal(task.state, 'CREATED')
  assert.equal(task.elementId, 'review')
  assert.equal(task.processDefinitionId, id)
  assert.equal(task.assignee ?? undefined, undefined) // unassigned

  await camunda.assignUserTask({ userTaskKey: task.userTaskKey, assignee: 'demo' })
  const assigned = await read('searchUserTasks',
    { filter: { userTaskKey: task.userTaskKey } }, until((r) => r.items[0]?.assignee === 'demo'))
  assert.equal(assigned.items[0].assignee, 'demo')

  await camunda.completeUserTask({ userTaskKey: task.userTaskKey, variables: { approved: true } })
  const done = await read('searchProcessInstances',
    { filter: { processInstanceKey: created.processInstanceKey } }, until((r) => r.items[0]?.state === 'COMPLETED'))
  assert.equal(done.items[0].state, 'COMPLETED')
  const vars = await read('searchVariables', { filter: { processInstanceKey: created.processInstanceKey, name: 'approved' } }, WAIT)
  assert.equal(vars.items[0]?.value, 'true', show(vars))
  await t.test('the completed task is found COMPLETED', async () => {
    const completed = await read('searchUserTasks', { filter: { userTaskKey: task.userTaskKey } }, { consistency: { waitUpToMs: 0 } })
    assert.equal(completed.items[0]?.state, 'COMPLETED', show(completed))
  })
})

test('every read above passes strict response validation', () => {
  // one line per operation and violation, with the first request that showed it
  const seen = new Map()
  for (const v of violations) {
    const what = `${v.op}: ${v.issues.join('; ')}`
    if (!seen.has(what)) seen.set(what, `${what} (request ${show(v.input)})`)
  }
  assert.deepEqual([...seen.values()], [])
})
