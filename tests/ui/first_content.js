// The UI's time to first content on a node holding 100,000 finished instances (issue 61;
// docs/benchmarks.md, "the UI at 100,000 instances"). Not part of the test suite.
//
//   node tests/ui/first_content.js fill    [--rest http://127.0.0.1:8080] [--finished 100000]
//   node tests/ui/first_content.js measure [--rest http://127.0.0.1:8080] [--runs 5]
//
// fill: deploys `ui_done` (a service task whose jobs it completes: the finished instances, with
// three variables each) and `ui_open` (1,000 instances left at their task, 100 of them with an
// incident, five error messages), over the REST API v2 of a running `zest start` (release
// build, history on). measure: opens each page in a fresh Chromium context (nothing cached) and
// takes the time from the navigation's start to its first content: the page's data shown and no
// "Loading…" left (for a diagram, the diagram with its statistics' overlays); prints the median
// and max of the runs, and the slowest REST call of each page.

import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { launch } from './harness.js'

const HERE = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : dflt
}
const REST = opt('rest', process.env.ZEEBE_REST_ADDRESS || 'http://127.0.0.1:8080')

async function rest(method, path, body) {
  const init = { method, headers: {} }
  if (body instanceof FormData) init.body = body
  else if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json'
    init.body = JSON.stringify(body)
  }
  const res = await fetch(`${REST}/v2${path}`, init)
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : null
}

async function deploy(id) {
  const xml = readFileSync(join(HERE, 'models', 'ui_task.bpmn'), 'utf8').replaceAll('zest_proc', id)
  const form = new FormData()
  form.append('resources', new Blob([xml], { type: 'application/xml' }), `${id}.bpmn`)
  return rest('POST', '/deployments', form)
}

/** Runs `one(i)` for i in [0, n) with `width` in flight. */
async function pool(n, width, one) {
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await one(next++)
  }))
}

async function activate(type, max) {
  const res = await rest('POST', '/jobs/activation', {
    type, worker: 'fill', timeout: 600000, maxJobsToActivate: max, requestTimeout: 1000,
  })
  return res.jobs
}

async function fill() {
  const finished = Number(opt('finished', 100000))
  const t0 = Date.now()
  await deploy('ui_done')
  await deploy('ui_open')
  let created = 0
  let completed = 0
  const progress = setInterval(() => console.log(
    `${((Date.now() - t0) / 1000).toFixed(0)} s: ${created} created, ${completed} completed`), 10000)
  const creating = pool(finished, 32, async (i) => {
    await rest('POST', '/process-instances', {
      processDefinitionId: 'ui_done',
      variables: { orderId: `order-${i}`, amount: i % 1000, customer: `customer-${i % 500}` },
    })
    created++
  })
  const working = (async () => {
    while (completed < finished) {
      const jobs = await activate('ui_done-work', 256)
      await pool(jobs.length, 32, (j) => rest('POST', `/jobs/${jobs[j].jobKey}/completion`, {})
        .then(() => { completed++ }))
    }
  })()
  await Promise.all([creating, working])
  await pool(1000, 32, (i) => rest('POST', '/process-instances', {
    processDefinitionId: 'ui_open', variables: { orderId: `open-${i}`, amount: i },
  }))
  let failed = 0
  while (failed < 100) {
    const jobs = await activate('ui_open-work', 100 - failed)
    for (const job of jobs) {
      await rest('POST', `/jobs/${job.jobKey}/failure`, {
        retries: 0, errorMessage: `payment service answered ${500 + (failed % 5)}`,
      })
      failed++
    }
  }
  clearInterval(progress)
  console.log(`filled in ${((Date.now() - t0) / 1000).toFixed(0)} s: ${finished} finished, 1000 active, ${failed} incidents`)
}

/** The pages measured: name, path, and the selectors that make its first content. */
async function pages() {
  const done = await rest('POST', '/process-definitions/search', { filter: { processDefinitionId: 'ui_done' } })
  const incident = await rest('POST', '/incidents/search', { filter: { state: 'ACTIVE' }, page: { limit: 1 } })
  if (!done.items.length || !incident.items.length) throw new Error('fill the node first')
  const def = done.items[0].processDefinitionKey
  const key = incident.items[0].processInstanceKey
  return [
    ['dashboard', '/operate', ['.metric .num', 'table tbody tr']],
    ['processes', '/operate/definitions', ['table tbody tr']],
    ['a definition: diagram and statistics', `/operate/definitions/${def}`, ['.djs-element', '.stat']],
    ['instances: completed, first page', '/operate/processes?state=COMPLETED', ['table tbody tr']],
    ['one instance (with an incident)', `/operate/processes/${key}`, ['.summary .badge', '.djs-element', '.stat', 'table tbody tr']],
    ['incidents', '/operate/incidents', ['table tbody tr']],
  ]
}

/** One cold load of `path`: ms from the navigation's start to the first content, and the
 *  slowest REST call meanwhile. */
async function once(browser, path, selectors) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  const calls = []
  page.on('requestfinished', (r) => {
    if (!r.url().includes('/v2/')) return
    const t = r.timing()
    let what = `${r.method()} ${new URL(r.url()).pathname}`
    const body = r.postData()
    if (body && body.includes('"filter"')) what += ` ${JSON.stringify(JSON.parse(body).filter)}`
    calls.push({ what, ms: t.responseEnd })
  })
  await page.goto(`${REST}${path}`)
  const at = await page.waitForFunction((sels) => {
    const shown = sels.every((s) => document.querySelector(s))
    const loading = [...document.querySelectorAll('[aria-live="polite"]')].some((e) => e.textContent.includes('Loading'))
    return shown && !loading && performance.now()
  }, selectors, { polling: 'raf', timeout: 30000 })
  const ms = await at.jsonValue()
  await page.waitForLoadState('networkidle').catch(() => {})
  await context.close()
  calls.sort((a, b) => b.ms - a.ms)
  return { ms, slowest: calls[0] }
}

async function measure() {
  const runs = Number(opt('runs', 5))
  const browser = await launch()
  const rows = []
  try {
    for (const [name, path, selectors] of await pages()) {
      const times = []
      let slowest = null
      for (let i = 0; i < runs; i++) {
        const r = await once(browser, path, selectors)
        times.push(r.ms)
        if (r.slowest && (!slowest || r.slowest.ms > slowest.ms)) slowest = r.slowest
      }
      times.sort((a, b) => a - b)
      const row = {
        page: name, path, median: Math.round(times[Math.floor(times.length / 2)]),
        max: Math.round(times[times.length - 1]), runs: times.map(Math.round).join(' '),
        slowestCall: slowest ? `${slowest.what} ${Math.round(slowest.ms)} ms` : '',
      }
      rows.push(row)
      console.log(JSON.stringify(row))
    }
  } finally {
    await browser.close()
  }
  console.log('\n| page | median ms | max ms | runs | slowest REST call |\n| --- | --- | --- | --- | --- |')
  for (const r of rows) console.log(`| ${r.page} | ${r.median} | ${r.max} | ${r.runs} | ${r.slowestCall} |`)
}

const command = args[0]
if (command === 'fill') await fill()
else if (command === 'measure') await measure()
else {
  console.error('usage: node tests/ui/first_content.js fill|measure [--rest URL] [--finished N] [--runs N]')
  process.exit(2)
}
