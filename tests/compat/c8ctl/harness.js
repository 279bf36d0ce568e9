// c8ctl (Camunda's REST CLI) 3.3.0 and a zest server for the c8ctl suite.
//
// c8ctl comes from $ROOT/../shared/tools/c8ctl-3.3.0 (the shared folder beside the checkout; read
// only): copied into tests/compat/.c8ctl/c8ctl once, with `npm install node@22` (c8ctl needs
// Node >= 22.18) and `npm install` run there (the SDK it pins, 9.1.5). A stamp (the folder's
// package.json and this file's install recipe) makes later runs reuse it.
//
// The server: ZEST_BIN=/path/to/zest, started as `zest start` on a temp data dir with port 0 for
// every address (the node binds what the kernel gives it and names the addresses in its READY
// line), stopped with SIGTERM at the end.

import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = resolve(HERE, '..', '..', '..')
export const TESTDATA = join(HERE, '..', 'testdata')
const C8CTL_SRC = resolve(ROOT, '..', 'shared', 'tools', 'c8ctl-3.3.0')
const CACHE = join(HERE, '..', '.c8ctl')
const C8CTL = join(CACHE, 'c8ctl')
const READY_TIMEOUT_MS = 60_000
const INSTALL_RECIPE = 'npm install node@22 && npm install (v1)'

/** Copies and installs c8ctl into tests/compat/.c8ctl once; returns { dir, node }. */
export function installC8ctl() {
  if (!existsSync(join(C8CTL_SRC, 'dist', 'index.js'))) {
    throw new Error(`c8ctl 3.3.0 is missing: expected it in ${C8CTL_SRC} (the shared/ folder beside ` +
      `the checkout, $ROOT/../shared/tools/c8ctl-3.3.0)`)
  }
  const stamp = createHash('sha256')
    .update(readFileSync(join(C8CTL_SRC, 'package.json')))
    .update(INSTALL_RECIPE)
    .digest('hex')
  const stampFile = join(CACHE, 'stamp')
  const node = join(C8CTL, 'node_modules', '.bin', 'node')
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && existsSync(node)) {
    return { dir: C8CTL, node }
  }
  rmSync(CACHE, { recursive: true, force: true })
  mkdirSync(CACHE, { recursive: true })
  cpSync(C8CTL_SRC, C8CTL, { recursive: true })
  const npm = (args) => execFileSync('npm', ['install', '--loglevel=error', '--no-audit', '--no-fund', ...args],
    { cwd: C8CTL, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 })
  try {
    npm(['node@22'])
    npm([])
  } catch (err) {
    throw new Error(`installing c8ctl into ${C8CTL} failed (npm install node@22, npm install): ${err.message}`)
  }
  writeFileSync(stampFile, stamp)
  return { dir: C8CTL, node }
}

/**
 * Runs c8ctl as a user would (`node dist/index.js ARGS`), with its config and data in `home`
 * and the environment `env` (CAMUNDA_BASE_URL or none). Resolves to
 * { code, stdout, stderr, json (stdout parsed, if it is JSON), lines (stderr's JSON lines) }.
 */
export function c8(c8ctl, home, env, args) {
  return new Promise((resolvePromise) => {
    const childEnv = { ...process.env }
    for (const k of Object.keys(childEnv)) {
      if (k.startsWith('CAMUNDA_') || k.startsWith('C8CTL_') || k.startsWith('ZEEBE_')) delete childEnv[k]
    }
    Object.assign(childEnv, {
      PATH: `${dirname(c8ctl.node)}:${process.env.PATH}`,
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_CACHE_HOME: join(home, 'cache'),
      C8CTL_DATA_DIR: join(home, 'data'),
      CI: '1', // no update check against the npm registry, no prompts
      NO_COLOR: '1',
      ...env,
    })
    const child = spawn(c8ctl.node, [join(c8ctl.dir, 'dist', 'index.js'), ...args],
      { cwd: home, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      let json
      try { json = JSON.parse(stdout) } catch { json = undefined }
      const lines = stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => {
        try { return JSON.parse(l) } catch { return { raw: l } }
      })
      resolvePromise({ code: code ?? signal, stdout, stderr, json, lines })
    })
  })
}

/** A description of a c8ctl run for assertion messages. */
export function show(r) {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`
}

/** Whether host:port can be bound now (nothing listens there). */
export function portFree(host, port) {
  return new Promise((resolvePromise) => {
    const srv = createServer()
    srv.once('error', (err) => resolvePromise(err.code === 'EADDRNOTAVAIL' || err.code === 'EAFNOSUPPORT' ? 'no-address' : false))
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolvePromise(true)))
  })
}

/**
 * Starts `zest start` with port 0 for every address (`rest` overrides the REST address):
 * { rest: 'http://host:port', stop() }. Rejects with err.bindFailed when it exits at start.
 */
export async function startZest({ rest = '127.0.0.1:0' } = {}) {
  const bin = process.env.ZEST_BIN
  if (!bin) throw new Error('set ZEST_BIN=/path/to/zest')
  if (!existsSync(bin)) throw new Error(`ZEST_BIN=${bin} does not exist`)
  const dir = mkdtempSync(join(tmpdir(), 'zest-c8ctl-'))
  const child = spawn(bin, ['start', '--data-dir', join(dir, 'data'),
    '--gateway-address', '127.0.0.1:0', '--management-address', '127.0.0.1:0',
    '--rest-address', rest], { stdio: ['ignore', 'pipe', 'pipe'] })
  const log = []
  const keep = (chunk) => { log.push(...chunk.toString().split('\n')); log.splice(0, Math.max(0, log.length - 60)) }
  child.stderr.on('data', keep)
  const ready = await new Promise((resolvePromise, reject) => {
    let out = ''
    const timer = setTimeout(() => fail('no READY line within 60 s'), READY_TIMEOUT_MS)
    function fail(why, exited) {
      clearTimeout(timer)
      child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
      const err = new Error(`zest did not start (${why}):\n${log.join('\n')}`)
      err.exitedAtStart = exited
      reject(err)
    }
    child.on('exit', (code, signal) => fail(`exited with ${code ?? signal}`, true))
    child.on('error', (err) => fail(`cannot run ${bin}: ${err.message}`))
    child.stdout.on('data', (chunk) => {
      keep(chunk)
      out += chunk.toString()
      const line = out.split('\n').find((l) => l.startsWith('READY '))
      if (line) {
        clearTimeout(timer)
        child.removeAllListeners('exit')
        resolvePromise(line)
      }
    })
  })
  const m = ready.match(/\brest=(\S+)/)
  if (!m) throw new Error(`no rest= in the READY line: ${ready}`)
  return {
    rest: `http://${m[1]}`,
    log: () => log.join('\n'),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r))
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
        await exited
        clearTimeout(timer)
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The model `name` from testdata with zest_proc replaced by a unique id, written to a temp
 * file named after the id: { id, path, xml }. */
export function model(name, prefix = name.replace(/\.bpmn$/, '')) {
  const id = `${prefix}_${randomBytes(4).toString('hex')}`
  const xml = readFileSync(join(TESTDATA, name), 'utf8').replaceAll('zest_proc', id)
  const path = join(mkdtempSync(join(tmpdir(), 'zest-c8ctl-model-')), `${id}.bpmn`)
  writeFileSync(path, xml)
  return { id, path, xml }
}

/** Calls `f` until it returns a truthy value (returned) or `ms` pass (the last value). */
export async function eventually(f, ms = 10_000) {
  const until = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v || Date.now() > until) return v
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** Which of `endpoints` zest has no route for: a POST there answers 404 with its "is none that
 * Zest serves" problem (a route it has answers otherwise: 400, 404 for an unknown key, ...). */
export async function missingEndpoints(rest, endpoints) {
  const lacking = []
  for (const e of endpoints) {
    const res = await fetch(rest + e, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    const text = await res.text()
    if (res.status === 404 && text.includes('is none that Zest serves')) lacking.push(e)
  }
  return lacking
}
