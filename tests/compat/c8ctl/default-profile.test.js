// c8ctl 3.3.0 with nothing configured: its default local profile, http://localhost:8080/v2 with
// Basic demo/demo (zest ignores the Authorization header; authentication is off). Zest's REST
// API goes on 127.0.0.1:8080 only when that port is free; otherwise the test is skipped (it
// never fails because something else holds 8080).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { c8, installC8ctl, missingEndpoints, model, portFree, show, startZest } from './harness.js'

test('the default local profile (localhost:8080, demo/demo)', async (t) => {
  const v4 = await portFree('127.0.0.1', 8080)
  const v6 = await portFree('::1', 8080)
  if (v4 !== true || v6 === false) {
    t.skip(`port 8080 is taken (${v4 !== true ? '127.0.0.1' : '[::1]'}:8080): c8ctl's default profile cannot reach a zest there`)
    return
  }
  const c8ctl = installC8ctl()
  let server
  try {
    server = await startZest({ rest: '127.0.0.1:8080' })
  } catch (err) {
    if (err.exitedAtStart) {
      t.skip(`zest could not bind 127.0.0.1:8080 (taken since the check?): ${err.message.split('\n').slice(-3).join(' ')}`)
      return
    }
    throw err
  }
  const home = mkdtempSync(join(tmpdir(), 'zest-c8ctl-home-'))
  try {
    const lacking = await missingEndpoints(server.rest, ['/v2/deployments', '/v2/process-instances'])
    if (lacking.length > 0) {
      t.skip(`this zest does not serve POST ${lacking.join(', POST ')} (the REST commands, branch rest-commands)`)
      return
    }
    const run = (...args) => c8(c8ctl, home, {}, args)
    const which = await run('which', 'profile')
    assert.equal(which.code, 0, show(which))

    const m = model('c8ctl_user_task.bpmn', 'c8ctl_default')
    const r = await run('run', m.path, '--json')
    assert.equal(r.code, 0, show(r))
    const created = r.lines.find((l) => l.message === 'Process instance created')
    assert.ok(created?.key, show(r))

    const pd = await run('list', 'pd', '--json')
    assert.equal(pd.code, 0, show(pd))
    assert.ok(pd.json?.some((row) => row['Process ID'] === m.id && row.Version === 1), show(pd))

    const pi = await run('list', 'pi', '--json')
    assert.equal(pi.code, 0, show(pi))
    assert.ok(pi.json?.some((row) => String(row.Key) === String(created.key) && row.State === 'ACTIVE'), show(pi))
  } finally {
    await server.stop()
    rmSync(home, { recursive: true, force: true })
  }
})
