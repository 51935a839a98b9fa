/**
 * The receiver's HTTP side over a real state folder: authentication before parsing, the size
 * bound, the documented shapes, 202 once kept, 503 when it cannot keep, the routes, the metrics,
 * and log lines that no notification can break or fill with a secret.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals'
import { createHmac } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hasUnsafeCharacter } from '../../src/helpers/text.ts'
import { MAX_MESSAGE_CHARS } from '../../src/report.ts'
import { Redactor } from '../../src/redact.ts'
import { emptyMemory, memoryToJson } from '../../src/serve/deploys.ts'
import {
  applyInput,
  createReceiverServer,
  logWriter,
  MAX_BODY_BYTES,
  Metrics
} from '../../src/serve/server.ts'
import { MAX_WAITING_CHANGES, StateFolder } from '../../src/serve/state.ts'

const SECRET = 'webhook-secret-0123456789abcdef'
const API_KEY = 'service-api-key-fedcba9876543210'
const fixture = (name: string): string =>
  readFileSync(`__tests__/fixtures/gitops/${name}.json`, 'utf8')
const sign = (body: string | Buffer, secret = SECRET): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
const bearer = { Authorization: `Bearer ${SECRET}` }

let dir: string
let state: StateFolder
let server: Server
let port: number
let lines: string[]
let metrics: Metrics
let now: number

async function start(folder: string, format: 'text' | 'json' = 'text'): Promise<void> {
  state = await StateFolder.open(folder, applyInput)
  const redactor = new Redactor()
  redactor.add(SECRET)
  redactor.add(API_KEY)
  const log = logWriter(
    format,
    redactor,
    line => lines.push(line),
    () => now
  )
  server = createReceiverServer({ secret: SECRET, state, metrics, log, clock: () => now })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cta-server-'))
  lines = []
  metrics = new Metrics()
  now = Date.parse('2025-03-12T15:00:00Z')
  await start(join(dir, 'state'))
})

afterEach(async () => {
  await new Promise(resolve => server.close(resolve))
  await state.close()
  rmSync(dir, { recursive: true, force: true })
})

interface Answer {
  status: number
  text: string
  headers: Record<string, string | string[] | undefined>
}

/** One request; `chunks` are written one by one (no Content-Length when there are several). */
function send(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  ...chunks: Array<string | Buffer>
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const length =
      chunks.length === 1 ? { 'Content-Length': String(Buffer.byteLength(chunks[0])) } : {}
    const req = request({ port, method, path, headers: { ...length, ...headers } }, response => {
      const chunks: string[] = []
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => chunks.push(chunk))
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          text: chunks.join(''),
          headers: response.headers
        })
      )
    })
    // The server may answer and close before the whole body is written.
    req.on('error', error =>
      (error as NodeJS.ErrnoException).code === 'EPIPE' ? undefined : reject(error)
    )
    for (const chunk of chunks) req.write(chunk)
    req.end()
  })
}

const argocd = (body: string, headers: Record<string, string> = bearer) =>
  send('POST', '/argocd', headers, body)
const flux = (body: string, signature = sign(body)) =>
  send('POST', '/flux', { 'X-Signature': signature }, body)

describe('authentication, before the body is parsed', () => {
  it.each([
    ['no Authorization header', {}],
    ['another secret', { Authorization: 'Bearer another-secret-0123456789' }],
    ['the secret with more after it', { Authorization: `Bearer ${SECRET}x` }],
    ['the secret without Bearer', { Authorization: SECRET }]
  ])('refuses Argo CD with %s: 401', async (_, headers) => {
    const answer = await argocd('{ not json', headers)
    expect(answer).toMatchObject({ status: 401, text: `${answerOf401('argocd')}\n` })
    expect(metrics.rejected.unauthorized).toBe(1)
  })

  it.each([
    ['no X-Signature header', undefined],
    ['the signature of another body', sign('{}')],
    ['a signature made with another secret', sign('{ not json', 'another-secret-0123456789')],
    ['a signature that is not sha256= and hex', 'sha1=0123']
  ])('refuses Flux with %s: 401', async (_, signature) => {
    const headers: Record<string, string> = signature ? { 'X-Signature': signature } : {}
    const answer = await send('POST', '/flux', headers, '{ not json')
    expect(answer.status).toBe(401)
  })

  it('takes Flux’s signature in either letter case', async () => {
    const body = fixture('flux-kustomization-succeeded')
    expect((await flux(body, sign(body).toUpperCase().replace('SHA256', 'sha256'))).status).toBe(
      202
    )
  })
})

function answerOf401(controller: 'argocd' | 'flux'): string {
  return controller === 'argocd'
    ? 'the Authorization header is not "Bearer " and the webhook secret'
    : 'the X-Signature header is not sha256= and the HMAC of the body with the webhook secret'
}

describe('the body', () => {
  const padded = (body: string, bytes: number) => body + ' '.repeat(bytes - Buffer.byteLength(body))

  it('of 1 MiB is read', async () => {
    const answer = await argocd(padded(fixture('argocd-sync-healthy'), MAX_BODY_BYTES))
    expect(answer.status).toBe(202)
  })

  it('of 1 MiB and 1 byte gets 413, by its length or as it arrives', async () => {
    const body = padded(fixture('argocd-sync-healthy'), MAX_BODY_BYTES + 1)
    expect((await argocd(body)).status).toBe(413)
    const chunked = await send('POST', '/argocd', bearer, body.slice(0, 1000), body.slice(1000))
    expect(chunked).toMatchObject({
      status: 413,
      text: `the body is over ${MAX_BODY_BYTES} bytes\n`
    })
    expect(chunked.headers.connection).toBe('close')
    expect(metrics.rejected.too_large).toBe(2)
    expect(state.waitingCount).toBe(0)
  })

  it('that is not JSON gets 400', async () => {
    const body = '{"app": '
    expect(await flux(body)).toMatchObject({ status: 400, text: 'the body is not JSON\n' })
  })

  it.each([
    ['argocd', '[]'],
    ['argocd', '{"app": {"metadata": {"name": "MARKER\\u0000", "namespace": 7}}}'],
    ['flux', '{"involvedObject": "MARKER"}']
  ])(
    'of the wrong shape for %s gets 400 with one line that echoes nothing',
    async (controller, body) => {
      const answer = controller === 'argocd' ? await argocd(body) : await flux(body)
      expect(answer.status).toBe(400)
      expect(answer.text.trimEnd().split('\n')).toHaveLength(1)
      expect(answer.text).not.toContain('MARKER')
      expect(lines.join('\n')).not.toContain('MARKER')
      expect(metrics.rejected.invalid).toBe(1)
    }
  )
})

describe('a notification', () => {
  it('is answered 202 once its change is kept, and once only however often it comes', async () => {
    const body = fixture('argocd-sync-healthy')
    for (let time = 0; time < 5; time++) {
      expect(await argocd(body)).toMatchObject({ status: 202, text: 'accepted\n' })
    }
    expect(state.waitingCount).toBe(1)
    await state.close()
    state = await StateFolder.open(join(dir, 'state'), applyInput)
    expect(state.waitingCount).toBe(1)
    expect(lines[0]).toBe(
      'argocd argocd/shop: Succeeded, Healthy (deploy argocd/shop@2025-03-10T09:14:05.000Z); 1 change to record.'
    )
    expect(lines[1]).toContain('0 changes to record')
  })

  it('that records nothing is answered 202 and says why', async () => {
    expect(await flux(fixture('flux-kustomization-progressing'))).toMatchObject({
      status: 202,
      text: 'nothing to record\n'
    })
    expect(lines).toEqual([expect.stringMatching(/^A flux notification records nothing: /)])
  })

  it('gets 503 when the state folder cannot be written, and readiness fails', async () => {
    rmSync(join(dir, 'state'), { recursive: true })
    const answer = await argocd(fixture('argocd-sync-healthy'))
    expect(answer).toMatchObject({ status: 503, text: 'the state folder cannot be written\n' })
    expect(lines[0]).toBe(
      `error: The state folder cannot be written: ${join(dir, 'state')} was removed.`
    )
    expect((await send('GET', '/healthz')).status).toBe(503)
    expect(metrics.rejected.unavailable).toBe(1)
  })

  it(`gets 503 once ${MAX_WAITING_CHANGES} changes wait`, async () => {
    await new Promise(resolve => server.close(resolve))
    await state.close()
    const full = join(dir, 'full')
    mkdirSync(full)
    // What a receiver leaves after accepting 10,000 changes in one commit.
    const line = (seq: number) =>
      JSON.stringify({ seq, acceptedAt: now, change: { key: `k${seq}` } })
    const lines = Array.from({ length: MAX_WAITING_CHANGES }, (_, index) => `${line(index)}\n`)
    const memory = JSON.stringify({ memory: memoryToJson(emptyMemory()) })
    writeFileSync(join(full, 'queue.ndjson'), `${lines.join('')}${memory}\n`)
    await start(full)
    const answer = await flux(fixture('flux-kustomization-failed'))
    expect(answer).toMatchObject({
      status: 503,
      text: `${MAX_WAITING_CHANGES} changes already wait to be sent\n`
    })
  })
})

describe('the routes', () => {
  it('answer liveness and readiness while the folder can be written', async () => {
    expect(await send('GET', '/livez')).toMatchObject({ status: 200, text: 'live\n' })
    expect(await send('GET', '/healthz?verbose')).toMatchObject({ status: 200, text: 'ready\n' })
  })

  it('answer 404 for another path and 405 for another method, naming the allowed one', async () => {
    expect((await send('GET', '/argocd/../metrics')).status).toBe(404)
    const wrong = await send('GET', '/argocd')
    expect(wrong).toMatchObject({ status: 405, text: 'method not allowed\n' })
    expect(wrong.headers.allow).toBe('POST')
    expect((await send('POST', '/livez', {}, '{}')).headers.allow).toBe('GET')
  })

  it('give the metrics in Prometheus’s text format', async () => {
    await argocd(fixture('argocd-sync-healthy'))
    await argocd('{}', {})
    await flux(fixture('flux-kustomization-failed'))
    now += 42_000
    const answer = await send('GET', '/metrics')
    expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8')
    const samples = answer.text.split('\n').filter(line => line && !line.startsWith('#'))
    expect(samples).toEqual([
      'change_tracking_notifications_received_total{controller="argocd"} 2',
      'change_tracking_notifications_received_total{controller="flux"} 1',
      'change_tracking_notifications_rejected_total{reason="unauthorized"} 1',
      'change_tracking_notifications_rejected_total{reason="too_large"} 0',
      'change_tracking_notifications_rejected_total{reason="invalid"} 0',
      'change_tracking_notifications_rejected_total{reason="unavailable"} 0',
      'change_tracking_changes_recorded_total 0',
      'change_tracking_changes_dropped_total{reason="refused"} 0',
      'change_tracking_changes_dropped_total{reason="expired"} 0',
      'change_tracking_changes_waiting 2',
      'change_tracking_oldest_waiting_change_age_seconds 42'
    ])
    expect(answer.text).toContain('# TYPE change_tracking_changes_waiting gauge\n')
    expect(answer.text).toContain('# TYPE change_tracking_changes_recorded_total counter\n')
  })
})

describe('log lines', () => {
  const hostile = `${SECRET} \u001b[2J\r\n::error::owned ##[group] \u2028\u202e${API_KEY}`

  it('of a notification with hostile names hold no raw control character and no secret', async () => {
    const body = JSON.parse(fixture('argocd-sync-failed'))
    body.app.metadata.annotations['change-tracking/service'] = hostile
    body.app.status.operationState.message = hostile
    await argocd(JSON.stringify(body))
    await argocd(JSON.stringify(hostile), bearer)
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) {
      expect(hasUnsafeCharacter(line)).toBe(false)
      expect(line).not.toContain(SECRET)
    }
  })

  it('as JSON stay whole JSON, cut and inert, however long and hostile what they hold', () => {
    const written: string[] = []
    const redactor = new Redactor()
    redactor.add(SECRET)
    const log = logWriter(
      'json',
      redactor,
      line => written.push(line),
      () => 0
    )
    const long = `"\\\u0085${hostile}`.repeat(2000)
    log('warn', long, { a: long, b: long, c: long, d: long, e: long, count: 3 })
    const [line] = written
    expect(line.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS)
    expect(hasUnsafeCharacter(line)).toBe(false)
    expect(line).not.toContain(SECRET)
    const parsed = JSON.parse(line)
    expect(parsed).toMatchObject({ time: '1970-01-01T00:00:00.000Z', level: 'warn', count: 3 })
    expect(parsed.a.endsWith('…')).toBe(true)
  })

  it('as text say their level, but for information', () => {
    const written: string[] = []
    const log = logWriter('text', new Redactor(), line => written.push(line))
    log('info', 'one')
    log('error', 'two\nlines', { ignored: 'in text' })
    expect(written).toEqual(['one', 'error: two\\nlines'])
  })
})
