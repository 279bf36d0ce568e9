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
import assert from 'node:assert/strict'

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

/** The error a promise rejects with (fails when it resolves). */
export async function rejection(promise) {
  try {
    await promise
  } catch (e) {
    return e
  }
  assert.fail('expected a rejection')
}

/** The auth suites' gRPC flow: deploy, create with result, a worker completes the job. */
export async function grpcDeployCreateComplete(zbc, prefix) {
  const m = model('service_task.bpmn', prefix)
  const deployed = await zbc.deployResource({ processFilename: m.path })
  assert.equal(deployed.deployments[0].process.bpmnProcessId, m.id)
  const worker = zbc.createWorker({
    taskType: `${m.id}.work`,
    taskHandler: (job) => job.complete({ resultValue: 'done' }),
  })
  try {
    const result = await zbc.createProcessInstanceWithResult({
      bpmnProcessId: m.id, variables: { amount: 1 }, requestTimeout: 20_000,
    })
    assert.equal(result.bpmnProcessId, m.id)
    assert.equal(result.variables.finalValue, 'done')
  } finally {
    await worker.close()
    await zbc.close()
  }
}

/** The auth suites' REST flow: deploy, create, activate and complete the job. */
export async function restDeployCreateComplete(rest, prefix) {
  const m = model('simple_task.bpmn', prefix)
  const deployed = await rest.deployResourcesFromFiles([m.path])
  assert.equal(deployed.processes[0].processDefinitionId, m.id)
  const created = await rest.createProcessInstance({ processDefinitionId: m.id, variables: { n: 1 } })
  const jobs = await rest.activateJobs({ type: `${m.id}.task`, maxJobsToActivate: 1, timeout: 30_000, worker: `node-${prefix}` })
  assert.equal(jobs.length, 1, JSON.stringify(jobs))
  assert.equal(jobs[0].processInstanceKey, created.processInstanceKey)
  await rest.completeJob({ jobKey: jobs[0].jobKey })
}

/** The HTTP status of a REST client's rejection. */
export function httpStatus(err) {
  return err.statusCode ?? err.response?.statusCode ?? err.cause?.response?.statusCode
}

