// The UI suite's harness: a zest (the compat harness's acquireServer: ZEST_BIN, or
// ZEEBE_ADDRESS with ZEEBE_REST_ADDRESS), Debian's Chromium through playwright-core (its own
// browser downloads cannot be fetched here; CHROMIUM_BIN names another binary), the REST calls
// a test makes as a client would, and a screenshot of each test under target/ui-screenshots/.

import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import assert from 'node:assert/strict'
import { after, before } from 'node:test'
import { chromium } from 'playwright-core'
import { acquireServer } from '../compat/node/harness.js'

const HERE = dirname(fileURLToPath(import.meta.url))
const SHOTS = join(HERE, '..', '..', 'target', 'ui-screenshots')

export { acquireServer }

function chromiumPath() {
  if (process.env.CHROMIUM_BIN) return process.env.CHROMIUM_BIN
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    try {
      return execFileSync('which', [name], { encoding: 'utf8' }).trim()
    } catch {}
  }
  throw new Error('no Chromium: install Debian\'s chromium (apt-get install chromium) or set CHROMIUM_BIN')
}

export function launch() {
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] })
}

/** A page at 1280x800 (or `viewport`) that records console errors and uncaught exceptions. */
export async function openPage(browser, viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  const errors = []
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()} (${m.location().url})`) })
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`))
  return { page, errors, close: () => context.close() }
}

export async function screenshot(page, name) {
  mkdirSync(SHOTS, { recursive: true })
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}

/** A test file's zest and Chromium, started before its tests and stopped after them:
 *  { server, browser, withPage(name, body, viewport?, allowed?) } (pageTest on the browser). */
export function setup() {
  const ctx = {}
  before(async () => {
    ctx.server = await acquireServer()
    ctx.browser = await launch()
  })
  after(async () => {
    await ctx.browser?.close()
    await ctx.server?.stop()
  })
  ctx.withPage = (...args) => pageTest(ctx.browser, ...args)
  return ctx
}

/** Runs `body(page)` on a fresh page of `browser`; fails on console errors (but those
 *  `allowed` matches); keeps a screenshot named `name`. */
export async function pageTest(browser, name, body, viewport, allowed) {
  const { page, errors, close } = await openPage(browser, viewport)
  try {
    await body(page)
  } finally {
    await screenshot(page, name).catch(() => {})
    await close()
  }
  assert.deepEqual(errors.filter((e) => !allowed?.test(e)), [], 'no console errors')
}

/** A test model (models/<file>) with a unique process id (or `id`, for another version of a
 *  process): { id, xml, name }. */
export function model(file = 'ui_task.bpmn', id = `ui_${randomBytes(4).toString('hex')}`) {
  const xml = readFileSync(join(HERE, 'models', file), 'utf8').replaceAll('zest_proc', id)
  return { id, xml, name: `${id}.bpmn` }
}

/** A REST API v2 call: the parsed answer; a non-2xx answer throws with its body. A server
 *  with `credentials` ('user:password') is called with Basic authentication. */
export async function rest(server, method, path, body) {
  const init = { method, headers: {} }
  if (server.credentials) init.headers.Authorization = `Basic ${Buffer.from(server.credentials).toString('base64')}`
  if (body instanceof FormData) init.body = body
  else if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json'
    init.body = JSON.stringify(body)
  }
  const res = await fetch(`${server.rest}/v2${path}`, init)
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : null
}

export async function deploy(server, m) {
  const form = new FormData()
  form.append('resources', new Blob([m.xml], { type: 'application/xml' }), m.name)
  return rest(server, 'POST', '/deployments', form)
}

export async function startInstance(server, m, variables = {}) {
  const res = await rest(server, 'POST', '/process-instances', { processDefinitionId: m.id, variables })
  return String(res.processInstanceKey)
}

/** Activates the instance's job and fails it without retries: an incident. */
export async function failJob(server, m, message) {
  const job = await activateJob(server, m)
  await rest(server, 'POST', `/jobs/${job.jobKey}/failure`, { retries: 0, errorMessage: message })
  return job
}

export async function activateJob(server, m) {
  const res = await rest(server, 'POST', '/jobs/activation', {
    type: `${m.id}-work`, worker: 'ui-test', timeout: 60000, maxJobsToActivate: 1, requestTimeout: 10000,
  })
  if (!res.jobs.length) throw new Error(`no job of type ${m.id}-work`)
  return res.jobs[0]
}
