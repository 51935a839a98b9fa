/**
 * The command line's bundle as a process whose DNS server never answers: it gives up on the
 * service within its bounds and exits then, though its lookups are still pending. It runs in a
 * mount namespace of its own, whose /etc/resolv.conf names a loopback address where this test
 * reads queries on port 53 and answers none.
 */
import { afterAll, expect, it } from '@jest/globals'
import { execFileSync, spawn } from 'node:child_process'
import { createSocket, type Socket } from 'node:dgram'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cliEntry } from '../support/bundle.ts'

/** A name only DNS could answer: not in /etc/hosts, and in no zone that exists. */
const HOST = 'tracking.invalid.example'
/** Not 127.0.0.53, where a local resolver may listen. */
const NAMESERVER = `127.0.0.${100 + Math.floor(Math.random() * 150)}`
/** A key check and a recording of 2 s each, the process's start and end, and a margin. */
const BOUND_MS = 9_000

/** The server that never answers, or why this machine cannot run the test. */
async function blackHole(): Promise<Socket | string> {
  try {
    execFileSync('unshare', ['--mount', '--propagation', 'private', 'true'], { stdio: 'ignore' })
  } catch {
    return 'unshare --mount is not permitted here'
  }
  const hosts = readFileSync('/etc/nsswitch.conf', 'utf8').match(/^hosts:(.*)$/m)?.[1] ?? 'dns'
  if (!/\bdns\b/.test(hosts)) return '/etc/nsswitch.conf does not look host names up in DNS'
  if (readFileSync('/etc/hosts', 'utf8').includes(HOST)) return `/etc/hosts names ${HOST}`
  const socket = createSocket('udp4')
  socket.on('message', () => {})
  return new Promise(resolve => {
    socket.once('error', error => resolve(`port 53 on ${NAMESERVER}: ${error.message}`))
    socket.bind(53, NAMESERVER, () => resolve(socket))
  })
}

const server = await blackHole()
afterAll(() => void (typeof server === 'string' || server.close()))
const test = typeof server === 'string' ? it.skip : it
const skipped = typeof server === 'string' ? ` (skipped: ${server})` : ''

test(`exits as soon as it gives up on a DNS server that never answers${skipped}`, async () => {
  const work = mkdtempSync(join(tmpdir(), 'cta-resolver-'))
  const resolvConf = join(work, 'resolv.conf')
  // The most a resolver waits: without an early exit the lookups hold the process for minutes.
  writeFileSync(resolvConf, `nameserver ${NAMESERVER}\noptions timeout:30 attempts:5\n`)
  const args = [
    ...['run', '--base-url', `https://${HOST}/`, '--version', '1.0.0', '--service', 'shop'],
    ...['--timeout-seconds', '2', '--max-attempts', '1', '--', 'sh', '-c', 'exit 5']
  ]
  const inNamespace = ['sh', '-c', 'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolvConf]
  const command = [...inNamespace, process.execPath, await cliEntry(), ...args]
  const env = { PATH: process.env['PATH'], HOME: work, CHANGE_TRACKING_API_KEY: 'ct_k' }
  const started = performance.now()
  const child = spawn('unshare', ['--mount', '--propagation', 'private', ...command], {
    cwd: work,
    env
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const killer = setTimeout(() => child.kill('SIGKILL'), BOUND_MS)
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>(done =>
    child.on('close', (...end) => done(end))
  )
  clearTimeout(killer)
  const seconds = (performance.now() - started) / 1000
  expect({ exitCode, signal, stderr }).toEqual({
    exitCode: 5,
    signal: null,
    stderr: expect.stringContaining('POST /v2/change got no complete answer within 2 s')
  })
  expect(seconds).toBeLessThan(BOUND_MS / 1000)
})
