/**
 * The process ends as soon as the work is done: a child `node` that sends one request through the
 * transport exits promptly after the failure, whether the service or a proxy never answered.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { TEST_SERVICE_HOST, testCertificate } from '../../emulator/tls.ts'
import { startServer, startSilentServer, type SilentServer, type TestServer } from './loopback.ts'

/** "Promptly": how soon a process must exit once its work is done. */
const EXIT_WITHIN_MS = 1000

const TRANSPORT = pathToFileURL(join(import.meta.dirname, '../../src/service/transport.ts')).href
const REDACT = pathToFileURL(join(import.meta.dirname, '../../src/redact.ts')).href
const SCRIPT = `
import { Transport } from ${JSON.stringify(TRANSPORT)}
import { Redactor } from ${JSON.stringify(REDACT)}
const transport = new Transport({
  baseUrl: new URL(process.env.BASE_URL),
  apiKey: 'exit-test-key',
  timeoutMs: 200,
  maxAttempts: 2,
  userAgent: 'exit-test',
  redactor: new Redactor(),
  backoffBaseMs: 10
})
await transport.send({ method: 'POST', path: 'v2/change', body: '{}' }).then(
  () => console.log('SENT'),
  error => console.log('FAILED ' + error.kind)
)
`

/** Runs the script; resolves with its output and the time from its last line to its exit. */
function runChild(env: Record<string, string>): Promise<{ output: string; lingerMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'cta-exit-'))
  const script = join(dir, 'send.mjs')
  writeFileSync(script, SCRIPT)
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env }
  for (const name of ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy', 'NODE_OPTIONS']) {
    if (!(name in env)) delete childEnv[name]
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { env: childEnv })
    let output = ''
    let lastLineAt = 0
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      lastLineAt = performance.now()
    })
    child.stderr.on('data', () => {})
    child.on('error', reject)
    child.on('exit', () => {
      clearTimeout(killer)
      resolve({ output: output.trim(), lingerMs: performance.now() - lastLineAt })
    })
  })
}

let service: TestServer
let silent: SilentServer
let certPath: string

beforeAll(async () => {
  const certificate = await testCertificate()
  certPath = certificate.certPath
  service = await startServer({ key: certificate.key, cert: certificate.cert }, () => {})
  silent = await startSilentServer()
})

afterAll(async () => {
  await service.close()
  await silent.close()
})

describe('a process using the transport', () => {
  it('exits promptly after a service that never answers, and through a proxy that never answers CONNECT', async () => {
    const [direct, proxied] = await Promise.all([
      runChild({ BASE_URL: `${service.origin}/`, NODE_EXTRA_CA_CERTS: certPath }),
      runChild({
        BASE_URL: `https://${TEST_SERVICE_HOST}:${service.port}/`,
        HTTPS_PROXY: silent.url
      })
    ])
    expect(direct.output).toBe('FAILED outage')
    expect(proxied.output).toBe('FAILED outage')
    expect(service.requests).toHaveLength(2)
    expect(silent.connections).toBe(2)
    expect(direct.lingerMs).toBeLessThan(EXIT_WITHIN_MS)
    expect(proxied.lingerMs).toBeLessThan(EXIT_WITHIN_MS)
  })
})
