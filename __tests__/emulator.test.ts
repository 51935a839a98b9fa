/**
 * The emulator's contract: what the interface refuses (401, 413, 415, 404, 400), ids, and the
 * faults the other suites inject. emulator/cli.ts is tested as a process.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import * as http from 'node:http'
import type { IncomingHttpHeaders } from 'node:http'
import * as https from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  Emulator,
  MAX_EVENT_IDS_PER_REQUEST,
  MAX_EVENTS_PER_REQUEST,
  MAX_REQUEST_BYTES
} from '../emulator/emulator.ts'
import { trustTestCertificate } from '../emulator/tls.ts'

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

interface CallOptions {
  /** The API key to send; null sends none. Default: the emulator's key. */
  key?: string | null
  body?: string | Buffer
  contentType?: string
  headers?: Record<string, string>
  timeoutMs?: number
  port?: number
  /** Trust this certificate instead of the default CAs. */
  ca?: string
  agent?: https.Agent
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

let emulator: Emulator

/** One HTTPS request to the emulator, on its own connection unless an agent is given. */
function call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers }
  const key = options.key === undefined ? emulator.apiKey : options.key
  if (key !== null) headers['X-Service-ApiKey'] = key
  if (options.contentType) headers['Content-Type'] = options.contentType
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: 'localhost',
        port: options.port ?? emulator.port,
        method,
        path,
        headers,
        ca: options.ca,
        agent: options.agent ?? false
      },
      res => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8')
          })
        )
        res.on('error', reject)
      }
    )
    req.on('error', reject)
    if (options.timeoutMs) {
      req.setTimeout(options.timeoutMs, () => req.destroy(new Error('client timeout')))
    }
    req.end(options.body)
  })
}

const postJson = (path: string, value: unknown, options: CallOptions = {}): Promise<Answer> =>
  call('POST', path, {
    body: typeof value === 'string' ? value : JSON.stringify(value),
    contentType: 'application/json',
    ...options
  })

const postNdjson = (lines: unknown[], options: CallOptions = {}): Promise<Answer> =>
  call('POST', '/v2/stream', {
    body: lines.map(line => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n'),
    contentType: 'application/x-ndjson',
    ...options
  })

const errorOf = (answer: Answer): string => (JSON.parse(answer.body) as { error: string }).error

/** Polls a condition, at most `limitMs`. */
async function waitFor(condition: () => boolean, limitMs = 5000): Promise<void> {
  const deadline = Date.now() + limitMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

beforeAll(async () => {
  for (const name of [
    'HTTPS_PROXY',
    'https_proxy',
    'HTTP_PROXY',
    'http_proxy',
    'NO_PROXY',
    'no_proxy'
  ]) {
    delete process.env[name]
  }
  await trustTestCertificate()
  emulator = await Emulator.start()
})

afterAll(async () => {
  await emulator.close()
})

beforeEach(() => {
  emulator.reset()
})

describe('authentication', () => {
  it.each([
    ['POST', '/v2/change'],
    ['GET', '/v2/change/some-id'],
    ['POST', '/v2/stream'],
    ['GET', '/v2/event_results?ids=a'],
    ['POST', '/v1/heartbeat/monitor'],
    ['GET', '/v2/hello'],
    ['GET', '/v3/unknown']
  ])('refuses %s %s with 401 without a key and with a wrong key', async (method, path) => {
    emulator.addHeartbeatMonitor('monitor')
    for (const key of [null, 'wrong-key', emulator.apiKey.toUpperCase()]) {
      const body = method === 'POST' ? '{"description":"d","name":"n","data":{}}' : undefined
      const answer = await call(method, path, { key, body, contentType: 'application/json' })
      expect(answer.status).toBe(401)
      expect(JSON.parse(answer.body)).toEqual({ error: 'invalid API key' })
    }
    expect(emulator.changes.size + emulator.events.size).toBe(0)
    expect(emulator.heartbeats.get('monitor')).toEqual([])
  })

  it('does not answer plain HTTP', async () => {
    const plain = new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: emulator.port, path: '/v2/hello' },
        resolve
      )
      req.on('error', reject)
      req.setTimeout(5000, () => req.destroy(new Error('client timeout')))
      req.end()
    })
    await expect(plain).rejects.toThrow(/socket hang up|ECONNRESET/)
  })
})

describe('routing', () => {
  it('answers GET /v2/hello with OK as text/plain, or as the JSON string "OK" with helloAsJson', async () => {
    const answer = await call('GET', '/v2/hello')
    expect(answer).toMatchObject({ status: 200, body: 'OK' })
    expect(answer.headers['content-type']).toMatch(/^text\/plain/)
    const jsonHello = await Emulator.start({ helloAsJson: true })
    try {
      const json = await call('GET', '/v2/hello', { port: jsonHello.port })
      expect(json.headers['content-type']).toBe('application/json')
      expect(json.body).toBe('"OK"')
    } finally {
      await jsonHello.close()
    }
  })

  it('answers 404 to an unknown path and 405 with Allow to a wrong method', async () => {
    const unknown = await call('GET', '/v2/changes')
    expect(unknown.status).toBe(404)
    expect(errorOf(unknown)).toContain('GET /v2/changes')
    const wrong = await call('DELETE', '/v2/change/abc')
    expect(wrong.status).toBe(405)
    expect(wrong.headers['allow']).toBe('GET')
  })
})

describe('POST /v2/change and GET /v2/change/<id>', () => {
  it('creates a change with 201 and a UUID, and reads it back with every field defaulted', async () => {
    const before = Math.floor(Date.now() / 1000)
    const created = await postJson('/v2/change', { description: 'Deploy 1.2.3' })
    expect(created.status).toBe(201)
    const { id } = JSON.parse(created.body) as { id: string }
    expect(id).toMatch(UUID)

    const read = await call('GET', `/v2/change/${encodeURIComponent(id)}`)
    expect(read.status).toBe(200)
    const change = JSON.parse(read.body) as Record<string, unknown>
    expect(change).toEqual({
      id,
      description: 'Deploy 1.2.3',
      environment: '',
      service: '',
      version: '',
      user: '',
      comment: '',
      team: '',
      labels: '',
      custom_metadata: '',
      created_at: expect.any(Number)
    })
    expect(change.created_at).toBeGreaterThanOrEqual(before)
    expect(change.created_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000))
  })

  it('stores every given field as sent', async () => {
    const fields = {
      description: 'Flag flip',
      environment: 'production',
      service: 'billing',
      version: 'abc123',
      user: 'octocat',
      comment: 'see #12',
      team: 'payments',
      labels: 'deploy,canary',
      custom_metadata: '{"run":7}',
      created_at: 1700000000
    }
    const created = await postJson('/v2/change', fields, {
      contentType: 'application/json; charset=utf-8'
    })
    expect(created.status).toBe(201)
    const { id } = JSON.parse(created.body) as { id: string }
    expect(JSON.parse((await call('GET', `/v2/change/${id}`)).body)).toEqual({ id, ...fields })
  })

  it.each([
    ['no Content-Type', undefined, {}],
    ['text/plain', 'text/plain', {}],
    ['ndjson', 'application/x-ndjson', {}],
    ['a charset other than UTF-8', 'application/json; charset=latin1', {}],
    ['a compressed body', 'application/json', { 'Content-Encoding': 'gzip' }]
  ])('refuses %s with 415', async (_, contentType, headers) => {
    const answer = await call('POST', '/v2/change', {
      body: '{"description":"d"}',
      contentType,
      headers
    })
    expect(answer.status).toBe(415)
    expect(emulator.changes.size).toBe(0)
  })

  it.each([
    ['invalid JSON', '{"description":', /not valid JSON/],
    ['an array', '[{"description":"d"}]', /JSON object, got an array/],
    ['a missing description', { service: 's' }, /description is required/],
    ['a blank description', { description: '  ' }, /description is required/],
    ['a null service', { description: 'd', service: null }, /service must be a string, got null/],
    ['custom_metadata as an object', { description: 'd', custom_metadata: {} }, /custom_metadata/],
    ['custom_metadata not JSON', { description: 'd', custom_metadata: '{run' }, /valid JSON/],
    ['created_at as a string', { description: 'd', created_at: '1700000000' }, /created_at/],
    ['an unknown field', { description: 'd', createdAt: 1 }, /unknown field "createdAt"/],
    ['a body that is not UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), /UTF-8/]
  ])('refuses %s with 400 and says why', async (_, body, message) => {
    const answer = await call('POST', '/v2/change', {
      body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
      contentType: 'application/json'
    })
    expect(answer.status).toBe(400)
    expect(errorOf(answer)).toMatch(message)
    expect(emulator.changes.size).toBe(0)
  })

  it('answers 404 to an unknown id, and finds a change only by its exact id', async () => {
    const unknown = await call('GET', `/v2/change/${randomUUID()}`)
    expect(unknown.status).toBe(404)
    expect(JSON.parse(unknown.body)).toEqual({ error: 'change not found' })
    const { id } = JSON.parse((await postJson('/v2/change', { description: 'd' })).body) as {
      id: string
    }
    expect((await call('GET', `/v2/change/${id.toUpperCase()}`)).status).toBe(404)
    expect((await call('GET', `/v2/change/${id}/`)).status).toBe(404)
  })
})

describe('POST /v2/stream', () => {
  it('ingests one JSON event with 202 and its client id', async () => {
    const answer = await postJson('/v2/stream', { id: 'evt-1', name: 'deploy', data: { a: 1 } })
    expect(answer.status).toBe(202)
    expect(JSON.parse(answer.body)).toEqual(['evt-1'])
    expect(emulator.events.get('evt-1')).toEqual({ name: 'deploy', data: { a: 1 } })
  })

  it('ingests NDJSON, one event per non-empty line, ids in order, a UUID when none is given', async () => {
    const answer = await call('POST', '/v2/stream', {
      body: '{"id":"a","name":"n","data":1}\r\n\n  \n{"name":"m","data":[2]}\n{"id":"c","name":"o","data":"x"}\n',
      contentType: 'application/x-ndjson'
    })
    expect(answer.status).toBe(202)
    const ids = JSON.parse(answer.body) as string[]
    expect(ids).toEqual(['a', expect.stringMatching(UUID), 'c'])
    expect([...emulator.events.keys()]).toEqual(ids)
    expect(emulator.events.get(ids[1])).toEqual({ name: 'm', data: [2] })
  })

  it('ingests an event whose data is null: the field is required, any JSON value fills it', async () => {
    const answer = await postJson('/v2/stream', { id: 'evt-null', name: 'deploy', data: null })
    expect(answer.status).toBe(202)
    expect(emulator.events.get('evt-null')).toEqual({ name: 'deploy', data: null })
  })

  it('stores an event sent again (a retried batch) once, as first received', async () => {
    await postNdjson([
      { id: 'a', name: 'first', data: {} },
      { id: 'b', name: 'n', data: {} }
    ])
    await postNdjson([
      { id: 'b', name: 'n', data: {} },
      { id: 'a', name: 'again', data: {} }
    ])
    expect([...emulator.events.keys()]).toEqual(['a', 'b'])
    expect(emulator.events.get('a')?.name).toBe('first')
  })

  it.each([
    ['no Content-Type', undefined],
    ['application/jsonl', 'application/jsonl']
  ])('refuses %s with 415', async (_, contentType) => {
    const answer = await call('POST', '/v2/stream', { body: '{"name":"n","data":{}}', contentType })
    expect(answer.status).toBe(415)
  })

  it(`accepts ${MAX_EVENTS_PER_REQUEST} events and refuses one more with 413`, async () => {
    const events = Array.from({ length: MAX_EVENTS_PER_REQUEST + 1 }, (_, i) => ({
      id: `e${i}`,
      name: 'n',
      data: {}
    }))
    const tooMany = await postNdjson(events)
    expect(tooMany.status).toBe(413)
    expect(emulator.events.size).toBe(0)
    const justEnough = await postNdjson(events.slice(0, MAX_EVENTS_PER_REQUEST))
    expect(justEnough.status).toBe(202)
    expect(JSON.parse(justEnough.body)).toHaveLength(MAX_EVENTS_PER_REQUEST)
  })

  it(`accepts a body of ${MAX_REQUEST_BYTES} bytes and answers 413 to more, without a reset`, async () => {
    const envelope = '{"name":"n","data":""}'
    const exact = `{"name":"n","data":"${'x'.repeat(MAX_REQUEST_BYTES - envelope.length)}"}`
    expect(Buffer.byteLength(exact)).toBe(MAX_REQUEST_BYTES)
    expect((await postJson('/v2/stream', exact)).status).toBe(202)

    expect((await postJson('/v2/stream', `${exact} `)).status).toBe(413)
    expect(emulator.requests.at(-1)).toMatchObject({ body: '', bodyBytes: MAX_REQUEST_BYTES + 1 })
    expect((await postJson('/v2/stream', 'x'.repeat(5 * MAX_REQUEST_BYTES))).status).toBe(413)
    expect(emulator.events.size).toBe(1)
  })

  it.each([
    ['no name', '{"data":{}}', /line 2: .*name/],
    ['no data', '{"name":"n"}', /line 2: .*data/],
    ['a numeric id', '{"id":7,"name":"n","data":{}}', /line 2: .*id must be a non-empty string/],
    ['an unknown field', '{"name":"n","data":{},"ts":1}', /line 2: .*unknown field "ts"/],
    ['invalid JSON', '{"name":', /line 2: not valid JSON/]
  ])(
    'refuses an event with %s with 400 naming the line, storing none',
    async (_, line, message) => {
      const answer = await postNdjson(['{"name":"ok","data":{}}', line, '{"name":"ok","data":{}}'])
      expect(answer.status).toBe(400)
      expect(errorOf(answer)).toMatch(message)
      expect(emulator.events.size).toBe(0)
    }
  )

  it('refuses a JSON array with application/json, and an NDJSON body without events', async () => {
    const array = await postJson('/v2/stream', [{ name: 'n', data: {} }])
    expect(array.status).toBe(400)
    expect(errorOf(array)).toMatch(/array/)
    expect((await postNdjson(['', ' '])).status).toBe(400)
  })
})

describe('GET /v2/event_results', () => {
  beforeEach(async () => {
    await postNdjson([
      { id: 'a', name: 'first', data: {} },
      { id: 'b,c', name: 'comma', data: {} },
      { id: 'x y+z/é', name: 'odd', data: {} }
    ])
  })

  it('answers one result per id, in order, found or not', async () => {
    const answer = await call('GET', '/v2/event_results?ids=a,missing')
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toEqual([
      { id: 'a', found: true, result: { name: 'first' } },
      { id: 'missing', found: false, result: null }
    ])
  })

  it('splits on literal commas only and decodes each id, with + as a space', async () => {
    const answer = await call('GET', '/v2/event_results?ids=a%2Cb,b%2Cc,x+y%2Bz%2F%C3%A9')
    expect(
      (JSON.parse(answer.body) as { id: string; found: boolean }[]).map(r => [r.id, r.found])
    ).toEqual([
      ['a,b', false],
      ['b,c', true],
      ['x y+z/é', true]
    ])
  })

  it(`accepts ${MAX_EVENT_IDS_PER_REQUEST} UUID ids and refuses one more with 400`, async () => {
    const ids = Array.from({ length: MAX_EVENT_IDS_PER_REQUEST + 1 }, () => randomUUID())
    const allowed = await call('GET', `/v2/event_results?ids=${ids.slice(1).join(',')}`)
    expect(allowed.status).toBe(200)
    expect(JSON.parse(allowed.body)).toHaveLength(MAX_EVENT_IDS_PER_REQUEST)
    const tooMany = await call('GET', `/v2/event_results?ids=${ids.join(',')}`)
    expect(tooMany.status).toBe(400)
    expect(errorOf(tooMany)).toMatch(`at most ${MAX_EVENT_IDS_PER_REQUEST}`)
  })

  it.each([
    ['no query', '/v2/event_results', /required/],
    ['an empty id', '/v2/event_results?ids=a,,b', /event id 2 is empty/],
    ['ids twice', '/v2/event_results?ids=a&ids=b', /more than once/],
    ['bad percent-encoding', '/v2/event_results?ids=a%zz', /percent-encoding/]
  ])('refuses %s with 400', async (_, path, message) => {
    const answer = await call('GET', path)
    expect(answer.status).toBe(400)
    expect(errorOf(answer)).toMatch(message)
  })
})

describe('POST /v1/heartbeat/<id>', () => {
  it('records a signal with a new id for a known monitor, ignoring the body', async () => {
    emulator.addHeartbeatMonitor('nightly')
    const answer = await call('POST', '/v1/heartbeat/nightly', {
      body: 'anything at all',
      contentType: 'text/plain'
    })
    expect(answer.status).toBe(200)
    const { id } = JSON.parse(answer.body) as { id: string }
    expect(id).toMatch(UUID)
    const second = JSON.parse((await call('POST', '/v1/heartbeat/nightly')).body) as { id: string }
    expect(emulator.heartbeats.get('nightly')).toEqual([id, second.id])
  })

  it('decodes the one path segment, so an encoded slash stays inside the id', async () => {
    emulator.addHeartbeatMonitor('a/../b c')
    const answer = await call('POST', '/v1/heartbeat/a%2F..%2Fb%20c')
    expect(answer.status).toBe(200)
    expect(emulator.heartbeats.get('a/../b c')).toHaveLength(1)
    expect(emulator.requests[0].rawPath).toBe('/v1/heartbeat/a%2F..%2Fb%20c')
    // Unencoded, the slash makes it another path.
    expect((await call('POST', '/v1/heartbeat/a/b')).status).toBe(404)
  })

  it('answers 404 to an unknown monitor', async () => {
    emulator.addHeartbeatMonitor('known')
    const answer = await call('POST', '/v1/heartbeat/unknown')
    expect(answer.status).toBe(404)
    expect(errorOf(answer)).toMatch(/monitor not found/)
  })
})

describe('faults', () => {
  it('answers an injected status with its headers and body, before authentication, once', async () => {
    emulator.inject('GET /v2/hello', {
      status: 503,
      body: 'busy ::warning::echoed',
      headers: { 'Retry-After': '2' }
    })
    const faulted = await call('GET', '/v2/hello', { key: null })
    expect(faulted.status).toBe(503)
    expect(faulted.headers['retry-after']).toBe('2')
    expect(faulted.headers['content-type']).toMatch(/^text\/plain/)
    expect(faulted.body).toBe('busy ::warning::echoed')
    expect((await call('GET', '/v2/hello')).status).toBe(200)
  })

  it('gives an injected status a JSON error body by default, and stores nothing', async () => {
    emulator.inject('POST /v2/change', { status: 500 })
    const answer = await postJson('/v2/change', { description: 'd' })
    expect(answer.status).toBe(500)
    expect(answer.headers['content-type']).toBe('application/json')
    expect(JSON.parse(answer.body)).toEqual({ error: 'injected fault' })
    expect(emulator.changes.size).toBe(0)
  })

  it('answers a 2XX of a wrong shape as given', async () => {
    emulator.inject('POST /v1/heartbeat/*', { status: 200, body: '{"id":42}' })
    const answer = await call('POST', '/v1/heartbeat/m')
    expect(answer).toMatchObject({ status: 200, body: '{"id":42}' })
  })

  it('answers a JSON body of exactly bodyBytes bytes', async () => {
    const bytes = 11 * 1024 * 1024
    emulator.inject('GET /v2/event_results', { status: 200, bodyBytes: bytes })
    const answer = await call('GET', '/v2/event_results?ids=a')
    expect(answer.status).toBe(200)
    expect(Buffer.byteLength(answer.body)).toBe(bytes)
    expect(JSON.parse(answer.body)).toEqual([expect.any(String)])
  })

  it('sends a 20 KB header, which a client with the default header limit refuses', async () => {
    emulator.inject('POST /v2/change', {
      status: 503,
      headers: { 'x-padding': 'p'.repeat(20 * 1024) }
    })
    await expect(postJson('/v2/change', { description: 'd' })).rejects.toThrow(/header|Parse/i)
    expect(emulator.requests).toHaveLength(1)
  })

  it('repeats a fault `times` times, keeps an Infinity one until reset(), and takes them in order', async () => {
    emulator.inject('GET /v2/hello', { status: 500 }, 2)
    emulator.inject('GET /v2/hello', { status: 503 })
    const statuses = []
    for (let i = 0; i < 4; i++) statuses.push((await call('GET', '/v2/hello')).status)
    expect(statuses).toEqual([500, 500, 503, 200])

    emulator.inject('GET /v2/hello', { status: 502 }, Infinity)
    for (let i = 0; i < 3; i++) expect((await call('GET', '/v2/hello')).status).toBe(502)
    emulator.reset()
    expect((await call('GET', '/v2/hello')).status).toBe(200)
  })

  it('matches one path segment with *, and only the route given', async () => {
    emulator.addHeartbeatMonitor('m1')
    emulator.inject('POST /v1/heartbeat/*', { status: 500 }, 2)
    expect((await call('GET', '/v2/hello')).status).toBe(200)
    expect((await call('POST', '/v1/heartbeat/other')).status).toBe(500)
    expect((await call('POST', '/v1/heartbeat/m1')).status).toBe(500)
    expect((await call('POST', '/v1/heartbeat/m1')).status).toBe(200)
  })

  it('resets the connection without answering', async () => {
    emulator.inject('POST /v2/change', { reset: true })
    await expect(postJson('/v2/change', { description: 'd' })).rejects.toThrow(
      /socket hang up|ECONNRESET/
    )
    expect(emulator.changes.size).toBe(0)
    expect((await postJson('/v2/change', { description: 'd' })).status).toBe(201)
  })

  it('redirects with 302 by default, or the status given, to the Location given', async () => {
    emulator.inject('GET /v2/hello', { redirect: 'https://elsewhere.test/v2/hello' })
    emulator.inject('POST /v2/change', { redirect: '/v3/change', status: 307 })
    const found = await call('GET', '/v2/hello')
    expect(found.status).toBe(302)
    expect(found.headers.location).toBe('https://elsewhere.test/v2/hello')
    const temporary = await postJson('/v2/change', { description: 'd' })
    expect(temporary.status).toBe(307)
    expect(temporary.headers.location).toBe('/v3/change')
  })

  it('hangs until close(), which ends the hung connection', async () => {
    const hanging = await Emulator.start()
    hanging.inject('GET /v2/hello', { hang: true })
    let settled = false
    const pending = call('GET', '/v2/hello', { port: hanging.port }).finally(() => {
      settled = true
    })
    pending.catch(() => undefined)
    await waitFor(() => hanging.requests.length === 1)
    await new Promise(resolve => setTimeout(resolve, 200))
    expect(settled).toBe(false)
    const closing = Date.now()
    await hanging.close()
    expect(Date.now() - closing).toBeLessThan(1000)
    await expect(pending).rejects.toThrow(/socket hang up|ECONNRESET/)
  })

  it('refuses a malformed route or count', () => {
    expect(() => emulator.inject('/v2/hello', { status: 500 })).toThrow(/METHOD \/path/)
    expect(() => emulator.inject('GET /v2/hello', { status: 500 }, 0)).toThrow(/times/)
    expect(() => emulator.inject('GET /v2/hello', { status: 500 }, 1.5)).toThrow(/times/)
  })
})

describe('request log and reset()', () => {
  it('records every request as received, rejected ones too, in arrival order', async () => {
    await call('POST', '/v2/change?dry=1', {
      body: '{"description":"é"}',
      contentType: 'application/json',
      key: 'wrong'
    })
    await call('GET', '/v2/event_results?ids=a%2Cb,c')
    expect(emulator.requests).toHaveLength(2)
    const [change, results] = emulator.requests
    expect(change).toMatchObject({
      method: 'POST',
      rawPath: '/v2/change',
      query: 'dry=1',
      body: '{"description":"é"}',
      bodyBytes: Buffer.byteLength(`{"description":"é"}`)
    })
    expect(change.headers['x-service-apikey']).toBe('wrong')
    expect(results).toMatchObject({ rawPath: '/v2/event_results', query: 'ids=a%2Cb,c', body: '' })
    expect(emulator.requestsTo('GET /v2/event_results')).toEqual([results])
    expect(emulator.requestsTo('POST /v2/change/*')).toEqual([])
  })

  it('forgets changes, events, monitors, signals, the log and faults', async () => {
    emulator.addHeartbeatMonitor('m')
    await postJson('/v2/change', { description: 'd' })
    await postJson('/v2/stream', { id: 'e', name: 'n', data: {} })
    await call('POST', '/v1/heartbeat/m')
    emulator.inject('GET /v2/hello', { status: 500 })

    emulator.reset()

    expect(emulator.requests).toEqual([])
    expect(emulator.changes.size + emulator.events.size + emulator.heartbeats.size).toBe(0)
    expect((await call('GET', '/v2/hello')).status).toBe(200)
    expect((await call('POST', '/v1/heartbeat/m')).status).toBe(404)
  })
})

/** Runs emulator/cli.ts with the project's Node; NODE_OPTIONS (jest's flags) left out. */
function startCli(args: string[]) {
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  return spawn(process.execPath, ['emulator/cli.ts', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe']
  })
}

async function runCli(
  args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = startCli(args)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  const code = await new Promise<number | null>(resolve => child.on('exit', resolve))
  return { code, stdout, stderr }
}

describe('emulator/cli.ts', () => {
  it('prints its options with --help, the heartbeat monitor among them, and exits 0', async () => {
    const { code, stdout } = await runCli(['--help'])
    expect(code).toBe(0)
    for (const option of [
      '--port',
      '--api-key',
      '--heartbeat-monitor',
      '--cert-out',
      '--ready-file'
    ]) {
      expect(stdout).toContain(option)
    }
  })

  it('exits 2 on an unknown option, pointing at --help', async () => {
    const { code, stderr } = await runCli(['--bogus'])
    expect(code).toBe(2)
    expect(stderr).toContain('--help')
  })

  it('starts, reports where it listens, serves, and stops on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cta-emulator-'))
    const certOut = join(dir, 'ca.pem')
    const readyFile = join(dir, 'ready.json')
    const child = startCli([
      '--port',
      '0',
      '--api-key',
      'launcher-key',
      '--cert-out',
      certOut,
      '--heartbeat-monitor',
      'm 1',
      '--heartbeat-monitor',
      'm2',
      '--ready-file',
      readyFile
    ])
    const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)))
    let output = ''
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no ready line within 10 s')), 10_000)
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString('utf8')
          if (output.includes('\n')) {
            clearTimeout(timer)
            resolve(output.slice(0, output.indexOf('\n')))
          }
        })
        child.on('exit', () => reject(new Error(`exited before ready: ${output}`)))
      })
      const ready = JSON.parse(line) as {
        url: string
        port: number
        certPath: string
        apiKey: string
      }
      expect(ready).toEqual({
        url: `https://localhost:${ready.port}/`,
        port: expect.any(Number),
        certPath: certOut,
        apiKey: 'launcher-key'
      })
      expect(readFileSync(readyFile, 'utf8')).toBe(`${line}\n`)

      const ca = readFileSync(certOut, 'utf8')
      const target = { port: ready.port, ca, key: 'launcher-key' }
      expect((await call('GET', '/v2/hello', target)).body).toBe('OK')
      expect((await call('POST', '/v1/heartbeat/m%201', target)).status).toBe(200)
      expect((await call('POST', '/v1/heartbeat/m2', target)).status).toBe(200)
      expect((await call('POST', '/v1/heartbeat/m3', target)).status).toBe(404)
      // One line per request, as it ends: what a hand-run of the bundle sent, and how it went.
      await waitFor(() => output.split('\n').length >= 6)
      expect(output.split('\n').slice(1, 5)).toEqual([
        'GET /v2/hello 200',
        'POST /v1/heartbeat/m%201 200',
        'POST /v1/heartbeat/m2 200',
        'POST /v1/heartbeat/m3 404'
      ])
    } finally {
      child.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
  })
})
