// c8ctl 3.3.0 (Camunda's REST CLI) against `zest start`, configured as a user would: only
// CAMUNDA_BASE_URL=http://127.0.0.1:<rest port>. Every command runs as `node dist/index.js VERB
// RESOURCE ... --json`; the tests read what the user sees: stdout (the data, JSON) and stderr
// (c8ctl's status lines, one JSON object each).

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { c8, eventually, installC8ctl, missingEndpoints, model, show, startZest } from './harness.js'

let c8ctl
let server
let home
let missing = [] // the command endpoints this zest does not serve (a route it does not have)
const run = (...args) => c8(c8ctl, home, { CAMUNDA_BASE_URL: server.rest }, args)

before(async () => {
  c8ctl = installC8ctl()
  server = await startZest()
  home = mkdtempSync(join(tmpdir(), 'zest-c8ctl-home-'))
  missing = await missingEndpoints(server.rest, COMMAND_ENDPOINTS)
})

// The REST commands c8ctl sends (deploy, create, jobs, messages, incident resolution, user task
// completion). A zest built before they were served answers 404 "... is none that Zest serves"
// for the route itself: the tests that need one are skipped, naming it.
const COMMAND_ENDPOINTS = [
  '/v2/deployments', '/v2/process-instances', '/v2/jobs/activation', '/v2/jobs/1/failure',
  '/v2/jobs/1/completion', '/v2/incidents/1/resolution', '/v2/messages/publication',
  '/v2/user-tasks/1/completion', '/v2/process-instances/1/cancellation',
]
/** Skips `t` (true) when zest lacks one of `endpoints`. */
function needs(t, endpoints = COMMAND_ENDPOINTS) {
  const lacking = endpoints.filter((e) => missing.includes(e))
  if (lacking.length === 0) return false
  t.skip(`this zest does not serve POST ${lacking.join(', POST ')} (the REST commands, branch rest-commands)`)
  return true
}

after(async () => {
  await server?.stop()
  if (home) rmSync(home, { recursive: true, force: true })
})

/** The stderr status line with `message`, or undefined. */
const status = (r, message) => r.lines.find((l) => l.message === message)
/** The rows of a list/search (stdout, a JSON array), [] when c8ctl printed none. */
const rows = (r) => (Array.isArray(r.json) ? r.json : [])
/** A list row's key without c8ctl's incident marker ("⚠ "). */
const rowKey = (row) => String(row.Key).replace(/^⚠ /, '')

/** `c8 run FILE`: the created instance's key. */
async function runModel(path, variables) {
  const args = ['run', path, '--json']
  if (variables) args.push('--variables', JSON.stringify(variables))
  const r = await run(...args)
  assert.equal(r.code, 0, show(r))
  assert.ok(status(r, 'Deployment successful'), show(r))
  const created = status(r, 'Process instance created')
  assert.ok(created?.key, show(r))
  return String(created.key)
}

/** `c8 get pi KEY [--variables]`: the instance. */
async function getInstance(key, variables = false) {
  const r = await run('get', 'pi', key, ...(variables ? ['--variables'] : []), '--json')
  assert.equal(r.code, 0, show(r))
  assert.ok(r.json, show(r))
  return r.json
}

async function waitForState(key, state) {
  const pi = await eventually(async () => {
    const p = await getInstance(key)
    return p.state === state ? p : undefined
  })
  assert.ok(pi, `instance ${key} never reached ${state}: ${JSON.stringify(await getInstance(key))}`)
}

test('deploy, list pd and get pd --xml', async (t) => {
  if (needs(t)) return
  const m = model('c8ctl_job.bpmn', 'c8ctl_deploy')
  const r = await run('deploy', m.path, '--json')
  assert.equal(r.code, 0, show(r))
  assert.ok(status(r, 'Deployment successful'), show(r))
  const deployed = rows(r).find((row) => row.ID === m.id)
  assert.ok(deployed, `the deploy table names ${m.id}: ${show(r)}`)
  assert.equal(deployed.Version, 1, show(r))
  assert.equal(deployed.Type, 'Process', show(r))

  const list = await run('list', 'pd', '--json')
  assert.equal(list.code, 0, show(list))
  const listed = rows(list).find((row) => row['Process ID'] === m.id)
  assert.ok(listed, `list pd shows ${m.id}: ${show(list)}`)
  assert.equal(listed.Version, 1, show(list))
  assert.equal(String(listed.Key), String(deployed.Key), show(list))

  const xml = await run('get', 'pd', String(listed.Key), '--xml')
  assert.equal(xml.code, 0, show(xml))
  assert.ok(xml.stdout.includes(`<bpmn:process id="${m.id}"`), show(xml))
  assert.ok(xml.stdout.includes('</bpmn:definitions>'), show(xml))
})

test('run, list pi and get pi --variables', async (t) => {
  if (needs(t)) return
  const m = model('c8ctl_user_task.bpmn', 'c8ctl_run')
  const key = await runModel(m.path, { order: 42, customer: 'ada' })

  const list = await run('list', 'pi', '--json')
  assert.equal(list.code, 0, show(list))
  const listed = rows(list).find((row) => rowKey(row) === key)
  assert.ok(listed, `list pi shows ${key}: ${show(list)}`)
  assert.equal(listed['Process ID'], m.id)
  assert.equal(listed.State, 'ACTIVE')
  assert.equal(listed.Version, 1)

  const pi = await getInstance(key, true)
  assert.equal(String(pi.processInstanceKey), key)
  assert.equal(pi.processDefinitionId, m.id)
  assert.equal(pi.state, 'ACTIVE')
  const vars = Object.fromEntries(pi.variables.map((v) => [v.name, v.value]))
  assert.deepEqual(vars, { order: '42', customer: '"ada"' }, JSON.stringify(pi.variables))
})

test('a job failed without retries: search inc, resolve inc', async (t) => {
  if (needs(t)) return
  const m = model('c8ctl_job.bpmn', 'c8ctl_inc')
  const type = `${m.id}.work`
  const pi = await runModel(m.path)

  const activate = async () => {
    const r = await run('activate', 'jobs', type, '--maxJobsToActivate', '1', '--timeout', '60000', '--json')
    assert.equal(r.code, 0, show(r))
    return rows(r).find((row) => String(row['Process Instance']) === pi)
  }
  const job = await eventually(activate)
  assert.ok(job, `activate jobs ${type} gives the instance's job`)
  assert.equal(job.Retries, 1)
  const jobKey = String(job.Key)

  const fail = await run('fail', 'job', jobKey, '--retries', '0', '--errorMessage', 'no stock', '--json')
  assert.equal(fail.code, 0, show(fail))
  assert.ok(status(fail, `Job ${jobKey} failed`), show(fail))

  const search = () => run('search', 'inc', '--processInstanceKey', pi, '--json')
  const found = await eventually(async () => {
    const r = await search()
    assert.equal(r.code, 0, show(r))
    return rows(r).find((row) => row.State === 'ACTIVE')
  })
  assert.ok(found, `search inc finds the incident of ${pi}: ${show(await search())}`)
  assert.equal(found.Type, 'JOB_NO_RETRIES')
  assert.equal(found.Message, 'no stock')
  assert.equal(String(found['Process Instance']), pi)
  const incKey = String(found.Key)

  // the instance is listed with c8ctl's incident marker
  const list = await run('list', 'pi', '--json')
  assert.ok(rows(list).some((row) => row.Key === `⚠ ${pi}`), show(list))

  // retries first (resolving a job incident with 0 retries is rejected, as in Zeebe)
  const update = await run('update', 'job', jobKey, '--retries', '1', '--json')
  assert.equal(update.code, 0, show(update))
  const resolve = await run('resolve', 'inc', incKey, '--json')
  assert.equal(resolve.code, 0, show(resolve))
  assert.ok(status(resolve, `Incident ${incKey} resolved`), show(resolve))

  const again = await eventually(activate)
  assert.ok(again, 'the job is activatable again after resolve')
  assert.equal(String(again.Key), jobKey)
  const complete = await run('complete', 'job', jobKey, '--json')
  assert.equal(complete.code, 0, show(complete))
  await waitForState(pi, 'COMPLETED')
  const resolved = await eventually(async () => rows(await search()).find((row) => row.State === 'RESOLVED'))
  assert.ok(resolved, `the incident is RESOLVED: ${show(await search())}`)
})

test('list ut, complete ut', async (t) => {
  if (needs(t)) return
  const m = model('c8ctl_user_task.bpmn', 'c8ctl_ut')
  const pi = await runModel(m.path)

  const list = () => run('list', 'ut', '--json')
  const task = await eventually(async () => {
    const r = await list()
    assert.equal(r.code, 0, show(r))
    return rows(r).find((row) => String(row['Process Instance']) === pi)
  })
  assert.ok(task, `list ut shows the task of ${pi}: ${show(await list())}`)
  assert.equal(task.State, 'CREATED')
  assert.equal(task.Assignee, '(unassigned)')

  const key = String(task.Key)
  const done = await run('complete', 'ut', key, '--variables', '{"approved":true}', '--json')
  assert.equal(done.code, 0, show(done))
  assert.ok(status(done, `User task ${key} completed`), show(done))
  await waitForState(pi, 'COMPLETED')
  const vars = (await getInstance(pi, true)).variables
  assert.ok(vars.some((v) => v.name === 'approved' && v.value === 'true'), JSON.stringify(vars))
  // no longer listed (list ut shows CREATED tasks)
  assert.ok(!rows(await list()).some((row) => String(row.Key) === key))
})

// c8ctl's Name column is the task's `name` (Camunda: the element's name), else its element id.
test('list ut names the task after its element', async (t) => {
  if (needs(t)) return
  const m = model('c8ctl_user_task.bpmn', 'c8ctl_utname')
  const pi = await runModel(m.path)
  const task = await eventually(async () => rows(await run('list', 'ut', '--json'))
    .find((row) => String(row['Process Instance']) === pi))
  assert.ok(task, `list ut shows the task of ${pi}`)
  assert.equal(task.Name, 'Review')
  assert.equal((await run('cancel', 'pi', pi, '--json')).code, 0)
})

test('publish msg correlates', async (t) => {
  if (needs(t)) return
  const m = model('receive_message.bpmn', 'c8ctl_msg')
  const pi = await runModel(m.path, { orderId: 'order-7' })
  const other = await runModel(m.path, { orderId: 'order-8' })

  const r = await run('publish', 'msg', `${m.id}-paid`, '--correlationKey', 'order-7',
    '--variables', '{"paid":true}', '--json')
  assert.equal(r.code, 0, show(r))
  assert.ok(status(r, `Message '${m.id}-paid' published`), show(r))

  await waitForState(pi, 'COMPLETED')
  const vars = (await getInstance(pi, true)).variables
  assert.ok(vars.some((v) => v.name === 'paid' && v.value === 'true'), JSON.stringify(vars))
  assert.equal((await getInstance(other)).state, 'ACTIVE')
  const cancel = await run('cancel', 'pi', other, '--json')
  assert.equal(cancel.code, 0, show(cancel))
})
