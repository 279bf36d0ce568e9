// c8ctl 3.3.0 against a node with `--auth basic` and the user demo/demo (run.sh's `auth` suite,
// which sets ZEEBE_REST_ADDRESS and CAMUNDA_BASIC_AUTH_USERNAME / _PASSWORD): configured as a
// user would, CAMUNDA_BASE_URL with c8ctl's CAMUNDA_USERNAME / CAMUNDA_PASSWORD, it deploys,
// runs and lists; with a wrong password it fails, saying why; and with nothing configured, its
// default local profile (localhost:8080, Basic demo/demo) works when the suite's node is there.
// Skipped in the other suites, whose nodes have no authentication.

import { before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { c8, installC8ctl, model, show } from './harness.js'

const REST = process.env.ZEEBE_REST_ADDRESS
const USER = process.env.CAMUNDA_BASIC_AUTH_USERNAME
const PASSWORD = process.env.CAMUNDA_BASIC_AUTH_PASSWORD
const skip = USER && REST ? false : 'run by the auth suite (a node with --auth basic: ZEEBE_REST_ADDRESS, CAMUNDA_BASIC_AUTH_USERNAME)'

let c8ctl
before(() => {
  if (!skip) c8ctl = installC8ctl()
})

/** Runs c8ctl in a fresh home with `env`. */
async function inHome(env, f) {
  const home = mkdtempSync(join(tmpdir(), 'zest-c8ctl-auth-'))
  try {
    return await f((...args) => c8(c8ctl, home, env, args))
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

/** Deploys and runs a model, then finds it in `list pd` and the instance in `list pi`. */
async function runAndList(run, prefix) {
  const m = model('c8ctl_user_task.bpmn', prefix)
  const r = await run('run', m.path, '--json')
  assert.equal(r.code, 0, show(r))
  const created = r.lines.find((l) => l.message === 'Process instance created')
  assert.ok(created?.key, show(r))
  const pd = await run('list', 'pd', '--json')
  assert.equal(pd.code, 0, show(pd))
  assert.ok(pd.json?.some((row) => row['Process ID'] === m.id), show(pd))
  // the list reads history, which a command reaches a moment later
  let pi
  for (let i = 0; i < 50; i++) {
    pi = await run('list', 'pi', '--json')
    if (pi.json?.some((row) => String(row.Key) === String(created.key))) return
    await new Promise((r) => setTimeout(r, 200))
  }
  assert.fail(`instance ${created.key} not listed: ${show(pi)}`)
}

test('CAMUNDA_USERNAME / CAMUNDA_PASSWORD: deploy, run, list', { skip, timeout: 60_000 }, async () => {
  await inHome({ CAMUNDA_BASE_URL: REST, CAMUNDA_USERNAME: USER, CAMUNDA_PASSWORD: PASSWORD },
    (run) => runAndList(run, 'c8ctl_auth_env'))
})

test('a wrong password fails, saying the request was unauthorized', { skip, timeout: 60_000 }, async () => {
  await inHome({ CAMUNDA_BASE_URL: REST, CAMUNDA_USERNAME: USER, CAMUNDA_PASSWORD: 'not the password' }, async (run) => {
    const r = await run('list', 'pi', '--json')
    assert.notEqual(r.code, 0, show(r))
    assert.match(r.stdout + r.stderr, /401|unauthori[sz]ed/i, show(r))
  })
})

test('the default local profile (localhost:8080, Basic demo/demo)', { skip, timeout: 60_000 }, async (t) => {
  if (!/^http:\/\/(127\.0\.0\.1|localhost):8080\/?$/.test(REST) || USER !== 'demo' || PASSWORD !== 'demo') {
    t.skip(`the suite's node is not on localhost:8080 with demo/demo (REST ${REST}): port 8080 was taken`)
    return
  }
  await inHome({}, (run) => runAndList(run, 'c8ctl_auth_default'))
})
