// Server and models for the Node SDK suite.
//
// ZEEBE_ADDRESS=host:port (and ZEEBE_REST_ADDRESS=http://host:port): use that server.
// Else ZEST_BIN=/path/to/zest: start `zest start` on a temp data dir with port 0 for each of its
// addresses (the node binds what the kernel gives it and names the addresses in its READY line),
// and stop it with SIGTERM at the end.

import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
export const TESTDATA = join(HERE, '..', 'testdata')
const READY_TIMEOUT_MS = 60_000

/** The server: { grpc: 'host:port', rest: 'http://host:port' | undefined, stop() }; `args`
 * (or `extra`) flags for `zest start` (with `tls`, the REST address is https://). */
export async function acquireServer({ args = [], extra = [], tls = false } = {}) {
  if (process.env.ZEEBE_ADDRESS) {
    return { grpc: process.env.ZEEBE_ADDRESS, rest: process.env.ZEEBE_REST_ADDRESS, stop: async () => {} }
  }
  const bin = process.env.ZEST_BIN
  if (!bin) throw new Error('set ZEST_BIN=/path/to/zest or ZEEBE_ADDRESS=host:port')
  const dir = mkdtempSync(join(tmpdir(), 'zest-node-'))
  const child = spawn(bin, ['start', '--data-dir', join(dir, 'data'),
    '--gateway-address', '127.0.0.1:0', '--management-address', '127.0.0.1:0',
    '--rest-address', '127.0.0.1:0', ...args, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] })
  const log = []
  const keep = (chunk) => { log.push(...chunk.toString().split('\n')); log.splice(0, Math.max(0, log.length - 60)) }
  child.stderr.on('data', keep)
  const ready = await new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => fail('no READY line within 60 s'), READY_TIMEOUT_MS)
    function fail(why) {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(new Error(`zest did not start (${why}):\n${log.join('\n')}`))
    }
    child.on('exit', (code, signal) => fail(`exited with ${code ?? signal}`))
    child.stdout.on('data', (chunk) => {
      keep(chunk)
      out += chunk.toString()
      const line = out.split('\n').find((l) => l.startsWith('READY '))
      if (line) {
        clearTimeout(timer)
        child.removeAllListeners('exit')
        resolve(line)
      }
    })
  })
  const field = (name) => {
    const m = ready.match(new RegExp(`\\b${name}=(\\S+)`))
    if (!m) throw new Error(`no ${name}= in the READY line: ${ready}`)
    return m[1]
  }
  return {
    grpc: field('gateway'),
    rest: `${tls ? 'https' : 'http'}://${field('rest')}`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
        await exited
        clearTimeout(timer)
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A unique process id, for the token zest_proc in the models. */
export function uniqueId(prefix) {
  return `${prefix}_${randomBytes(4).toString('hex')}`
}

/** The model `name` from testdata with zest_proc replaced by a unique id, written to a temp
 * file named after the id: { id, path, xml }. */
export function model(name, prefix = name.replace(/\.bpmn$/, '')) {
  const id = uniqueId(prefix)
  const xml = readFileSync(join(TESTDATA, name), 'utf8').replaceAll('zest_proc', id)
  const path = join(mkdtempSync(join(tmpdir(), 'zest-node-model-')), `${id}.bpmn`)
  writeFileSync(path, xml)
  return { id, path, xml }
}

/** A CA and a server certificate it signed for 127.0.0.1 and localhost, made in `dir` by
 * ../make_certs.sh (the openssl command; Node has no API to make certificates): { ca, cert, key }
 * paths. */
export function makeCerts(dir) {
  execFileSync(join(HERE, '..', 'make_certs.sh'), [dir], { stdio: ['ignore', 'ignore', 'inherit'] })
  return { ca: join(dir, 'ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key') }
}
