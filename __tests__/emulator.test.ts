import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import * as http from 'node:http'
import type { IncomingHttpHeaders } from 'node:http'
import * as https from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MAX_EVENTS_PER_REQUEST, MAX_REQUEST_BYTES } from '../src/service/client.ts'
import { Emulator } from '../emulator/emulator.ts'
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
  const everyRoute: [string, string][] = [
    ['POST', '/v2/change'],
    ['GET', '/v2/change/some-id'],
    ['POST', '/v2/stream'],
    ['GET', '/v2/event_results?ids=a'],
    ['POST', '/v1/heartbeat/monitor'],
    ['GET', '/v2/hello'],
    ['GET', '/v3/unknown']
  ]

  it.each(everyRoute)('refuses %s %s without a key', async (method, path) => {
    const answer = await call(method, path, { key: null })
    expect(answer.status).toBe(401)
    expect(JSON.parse(answer.body)).toEqual({ error: 'invalid API key' })
  })

  it.each(everyRoute)('refuses %s %s with a wrong key', async (method, path) => {
    const answer = await call(method, path, { key: 'wrong-key' })
    expect(answer.status).toBe(401)
    expect(JSON.parse(answer.body)).toEqual({ error: 'invalid API key' })
  })

  it('stores nothing for a refused request', async () => {
    emulator.addHeartbeatMonitor('monitor')
    await postJson('/v2/change', { description: 'd' }, { key: 'wrong' })
    await call('POST', '/v1/heartbeat/monitor', { key: 'wrong' })
    expect(emulator.changes.size).toBe(0)
    expect(emulator.heartbeats.get('monitor')).toEqual([])
  })

  it('echoes the received key in 401 bodies when asked to, for redaction tests', async () => {
    const careless = await Emulator.start({ echoKeyInErrors: true, apiKey: 'right' })
    try {
      const answer = await call('GET', '/v2/hello', { port: careless.port, key: 's3cr3t/key' })
      expect(answer.status).toBe(401)
      expect(answer.body).toContain('s3cr3t/key')
    } finally {
      await careless.close()
    }
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

describe('GET /v2/hello', () => {
  it('answers OK as text/plain', async () => {
    const answer = await call('GET', '/v2/hello')
    expect(answer.status).toBe(200)
    expect(answer.headers['content-type']).toMatch(/^text\/plain/)
    expect(answer.body).toBe('OK')
  })

  it('answers "OK" as JSON with helloAsJson', async () => {
    const jsonHello = await Emulator.start({ helloAsJson: true })
    try {
      const answer = await call('GET', '/v2/hello', { port: jsonHello.port })
      expect(answer.headers['content-type']).toBe('application/json')
      expect(answer.body).toBe('"OK"')
    } finally {
      await jsonHello.close()
    }
  })
})

describe('routing', () => {
  it('answers 404 to an unknown path', async () => {
    const answer = await call('GET', '/v2/changes')
    expect(answer.status).toBe(404)
    expect(errorOf(answer)).toContain('GET /v2/changes')
  })

  it.each([
    ['GET', '/v2/change', 'POST'],
    ['DELETE', '/v2/change/abc', 'GET'],
    ['GET', '/v2/stream', 'POST'],
    ['POST', '/v2/event_results', 'GET'],
    ['GET', '/v1/heartbeat/abc', 'POST'],
    ['POST', '/v2/hello', 'GET']
  ])('answers 405 to %s %s, allowing %s', async (method, path, allowed) => {
    const answer = await call(method, path)
    expect(answer.status).toBe(405)
    expect(answer.headers['allow']).toBe(allowed)
  })

  it('does not serve the endpoints under another version', async () => {
    expect((await call('GET', '/v1/hello')).status).toBe(404)
    expect((await call('POST', '/v2/heartbeat/abc')).status).toBe(404)
  })
})

describe('POST /v2/change and GET /v2/change/<id>', () => {
  it('creates a change with 201 and an id, and returns every field with defaults', async () => {
    const before = Math.floor(Date.now() / 1000)
    const created = await postJson('/v2/change', { description: 'Deploy 1.2.3' })
    expect(created.status).toBe(201)
    const { id } = JSON.parse(created.body) as { id: string }
    expect(id).toMatch(UUID)

    const read = await call('GET', `/v2/change/${id}`)
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
    expect(emulator.changes.get(id)).toEqual({ id, ...fields })
    expect(JSON.parse((await call('GET', `/v2/change/${id}`)).body)).toEqual({ id, ...fields })
  })

  it.each([
    ['no Content-Type', undefined],
    ['text/plain', 'text/plain'],
    ['form data', 'application/x-www-form-urlencoded'],
    ['ndjson', 'application/x-ndjson'],
    ['a charset other than UTF-8', 'application/json; charset=latin1']
  ])('refuses %s with 415', async (_, contentType) => {
    const answer = await call('POST', '/v2/change', {
      body: '{"description":"d"}',
      contentType
    })
    expect(answer.status).toBe(415)
    expect(emulator.changes.size).toBe(0)
  })

  it('refuses a compressed body with 415', async () => {
    const answer = await postJson(
      '/v2/change',
      { description: 'd' },
      {
        headers: { 'Content-Encoding': 'gzip' }
      }
    )
    expect(answer.status).toBe(415)
  })

  it.each([
    ['invalid JSON', '{"description":', /not valid JSON/],
    ['an array', '[{"description":"d"}]', /JSON object, got an array/],
    ['a string', '"d"', /JSON object, got a string/],
    ['a missing description', { service: 's' }, /description is required/],
    ['an empty description', { description: '' }, /description is required/],
    ['a blank description', { description: '  ' }, /description is required/],
    ['a numeric description', { description: 5 }, /description is required/],
    ['a numeric version', { description: 'd', version: 3 }, /version must be a string/],
    ['a null service', { description: 'd', service: null }, /service must be a string, got null/],
    ['labels as an array', { description: 'd', labels: ['a'] }, /labels must be a string/],
    ['custom_metadata as an object', { description: 'd', custom_metadata: {} }, /custom_metadata/],
    ['custom_metadata not JSON', { description: 'd', custom_metadata: '{run' }, /valid JSON/],
    ['created_at as a string', { description: 'd', created_at: '1700000000' }, /created_at/],
    ['an unknown field', { description: 'd', extra: 1 }, /unknown field "extra"/],
    ['a camel-cased field', { description: 'd', createdAt: 1 }, /unknown field "createdAt"/]
  ])('refuses %s with 400 and says why', async (_, body, message) => {
    const answer = await postJson('/v2/change', body)
    expect(answer.status).toBe(400)
    expect(errorOf(answer)).toMatch(message)
    expect(emulator.changes.size).toBe(0)
  })

  it('refuses a body that is not UTF-8 with 400', async () => {
    const answer = await call('POST', '/v2/change', {
      body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
      contentType: 'application/json'
    })
    expect(answer.status).toBe(400)
    expect(errorOf(answer)).toMatch(/UTF-8/)
  })

  it('answers 404 with "change not found" to an unknown id', async () => {
    const answer = await call('GET', `/v2/change/${randomUUID()}`)
    expect(answer.status).toBe(404)
    expect(JSON.parse(answer.body)).toEqual({ error: 'change not found' })
  })

  it('finds a change only by its exact, decoded id', async () => {
    const { id } = JSON.parse((await postJson('/v2/change', { description: 'd' })).body) as {
      id: string
    }
    expect((await call('GET', `/v2/change/${id.toUpperCase()}`)).status).toBe(404)
    expect((await call('GET', `/v2/change/${id}/`)).status).toBe(404)
    expect((await call('GET', `/v2/change/${encodeURIComponent(id)}`)).status).toBe(200)
    expect((await call('GET', '/v2/change/')).status).toBe(404)
  })

  it('refuses query parameters on retrieval', async () => {
    expect((await call('GET', '/v2/change/abc?x=1')).status).toBe(400)
  })
})

describe('POST /v2/stream', () => {
  it('ingests one JSON event with 202 and its client id', async () => {
    const answer = await postJson('/v2/stream', { id: 'evt-1', name: 'deploy', data: { a: 1 } })
    expect(answer.status).toBe(202)
    expect(JSON.parse(answer.body)).toEqual(['evt-1'])
    expect(emulator.events.get('evt-1')).toEqual({ name: 'deploy', data: { a: 1 }, receipts: 1 })
  })

  it('generates a UUID for an event without an id', async () => {
    const answer = await postJson('/v2/stream', { name: 'deploy', data: {} })
    const [id] = JSON.parse(answer.body) as string[]
    expect(id).toMatch(UUID)
    expect(emulator.eventOrder).toEqual([id])
  })

  it('ingests NDJSON, one event per non-empty line, ids in order', async () => {
    const answer = await call('POST', '/v2/stream', {
      body: '{"id":"a","name":"n","data":1}\r\n\n  \n{"name":"m","data":[2]}\n{"id":"c","name":"o","data":"x"}\n',
      contentType: 'application/x-ndjson'
    })
    expect(answer.status).toBe(202)
    const ids = JSON.parse(answer.body) as string[]
    expect(ids).toHaveLength(3)
    expect(ids[0]).toBe('a')
    expect(ids[1]).toMatch(UUID)
    expect(ids[2]).toBe('c')
    expect(emulator.eventOrder).toEqual(ids)
    expect(emulator.events.get(ids[1])).toEqual({ name: 'm', data: [2], receipts: 1 })
  })

  it('deduplicates by id and counts receipts', async () => {
    await postNdjson([
      { id: 'a', name: 'first', data: {} },
      { id: 'b', name: 'n', data: {} }
    ])
    await postNdjson([
      { id: 'b', name: 'n', data: {} },
      { id: 'c', name: 'n', data: {} },
      { id: 'a', name: 'again', data: {} }
    ])
    expect(emulator.eventOrder).toEqual(['a', 'b', 'c'])
    expect(emulator.events.get('a')).toEqual({ name: 'first', data: {}, receipts: 2 })
    expect(emulator.events.get('b')?.receipts).toBe(2)
    expect(emulator.events.get('c')?.receipts).toBe(1)
  })

  it('refuses a JSON array with application/json', async () => {
    const answer = await postJson('/v2/stream', [{ name: 'n', data: {} }])
    expect(answer.status).toBe(400)
    expect(errorOf(answer)).toMatch(/array/)
  })

  it.each([
    ['no Content-Type', undefined],
    ['text/plain', 'text/plain'],
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

  it(`accepts a body of ${MAX_REQUEST_BYTES} bytes and answers 413 to one byte more`, async () => {
    const envelope = '{"name":"n","data":""}'
    const exact = `{"name":"n","data":"${'x'.repeat(MAX_REQUEST_BYTES - envelope.length)}"}`
    expect(Buffer.byteLength(exact)).toBe(MAX_REQUEST_BYTES)
    expect((await postJson('/v2/stream', exact)).status).toBe(202)

    const over = `${exact} `
    const answer = await postJson('/v2/stream', over)
    expect(answer.status).toBe(413)
    expect(emulator.requests.at(-1)).toMatchObject({ body: '', bodyBytes: MAX_REQUEST_BYTES + 1 })
  })

  it('answers 413 to a body far over the limit without a reset', async () => {
    const answer = await postJson('/v2/stream', 'x'.repeat(5 * MAX_REQUEST_BYTES))
    expect(answer.status).toBe(413)
  })

  it.each([
    ['no name', '{"data":{}}', /line 2: .*name/],
    ['an empty name', '{"name":"","data":{}}', /line 2: .*name/],
    ['a numeric name', '{"name":1,"data":{}}', /line 2: .*name/],
    ['no data', '{"name":"n"}', /line 2: .*data/],
    ['null data', '{"name":"n","data":null}', /line 2: .*data/],
    ['a numeric id', '{"id":7,"name":"n","data":{}}', /line 2: .*id must be a non-empty string/],
    ['an empty id', '{"id":"","name":"n","data":{}}', /line 2: .*id/],
    ['an unknown field', '{"name":"n","data":{},"ts":1}', /line 2: .*unknown field "ts"/],
    ['an array', '[]', /line 2: .*JSON object/],
    ['invalid JSON', '{"name":', /line 2: not valid JSON/]
  ])('refuses an event with %s with 400 naming the line', async (_, line, message) => {
    const answer = await postNdjson(['{"name":"ok","data":{}}', line, '{"name":"ok","data":{}}'])
    expect(answer.status).toBe(400)
    expect(errorOf(answer)).toMatch(message)
    expect(emulator.events.size).toBe(0)
  })

  it('refuses an NDJSON body without events', async () => {
    expect((await postNdjson(['', ' '])).status).toBe(400)
  })

  it('keeps only ids, names and sizes when keepPayloads is false', async () => {
    const lean = await Emulator.start({ keepPayloads: false })
    try {
      const body = '{"id":"a","name":"n","data":{"big":true}}'
      await postJson('/v2/stream', body, { port: lean.port, key: lean.apiKey })
      expect(lean.events.get('a')).toEqual({ name: 'n', data: undefined, receipts: 1 })
      expect(lean.requests[0]).toMatchObject({ body: '', bodyBytes: body.length })
    } finally {
      await lean.close()
    }
  })

  it('takes 100 batches of 1000 events quickly', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 4 })
    try {
      const started = Date.now()
      const batches = Array.from({ length: 100 }, (_, batch) =>
        Array.from({ length: 1000 }, (_, i) =>
          JSON.stringify({ id: `b${batch}-${i}`, name: 'load', data: { i, batch } })
        ).join('\n')
      )
      const answers = await Promise.all(
        batches.map(body =>
          call('POST', '/v2/stream', { body, contentType: 'application/x-ndjson', agent })
        )
      )
      expect(answers.every(answer => answer.status === 202)).toBe(true)
      expect(emulator.eventOrder).toHaveLength(100_000)
      expect(Date.now() - started).toBeLessThan(5000)
    } finally {
      agent.destroy()
    }
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

  it('splits on literal commas only: an encoded comma is part of an id', async () => {
    const answer = await call('GET', '/v2/event_results?ids=a%2Cb,b%2Cc,b,c')
    expect(
      (JSON.parse(answer.body) as { id: string; found: boolean }[]).map(r => [r.id, r.found])
    ).toEqual([
      ['a,b', false],
      ['b,c', true],
      ['b', false],
      ['c', false]
    ])
  })

  it('decodes each id, with + as a space', async () => {
    const encoded = encodeURIComponent('x y+z/é')
    const [result] = JSON.parse((await call('GET', `/v2/event_results?ids=${encoded}`)).body) as {
      found: boolean
    }[]
    expect(result.found).toBe(true)
    const [plus] = JSON.parse(
      (await call('GET', '/v2/event_results?ids=x+y%2Bz%2F%C3%A9')).body
    ) as {
      id: string
      found: boolean
    }[]
    expect(plus).toMatchObject({ id: 'x y+z/é', found: true })
  })

  it('accepts 1000 UUID ids and refuses 1001 with 400', async () => {
    const ids = Array.from({ length: 1001 }, () => randomUUID())
    const thousand = await call('GET', `/v2/event_results?ids=${ids.slice(0, 1000).join(',')}`)
    expect(thousand.status).toBe(200)
    expect(JSON.parse(thousand.body)).toHaveLength(1000)
    const tooMany = await call('GET', `/v2/event_results?ids=${ids.join(',')}`)
    expect(tooMany.status).toBe(400)
    expect(errorOf(tooMany)).toMatch(/at most 1000/)
  })

  it.each([
    ['no query', '/v2/event_results', /required/],
    ['another parameter only', '/v2/event_results?id=a', /required/],
    ['an empty list', '/v2/event_results?ids=', /empty/],
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
  it('answers an injected status with its headers and body, once', async () => {
    emulator.inject('GET /v2/hello', {
      status: 503,
      body: 'busy',
      headers: { 'Retry-After': '2' }
    })
    const faulted = await call('GET', '/v2/hello')
    expect(faulted.status).toBe(503)
    expect(faulted.headers['retry-after']).toBe('2')
    expect(faulted.headers['content-type']).toMatch(/^text\/plain/)
    expect(faulted.body).toBe('busy')
    expect((await call('GET', '/v2/hello')).status).toBe(200)
  })

  it('gives an injected status a JSON error body by default', async () => {
    emulator.inject('POST /v2/change', { status: 500 })
    const answer = await postJson('/v2/change', { description: 'd' })
    expect(answer.status).toBe(500)
    expect(answer.headers['content-type']).toBe('application/json')
    expect(JSON.parse(answer.body)).toEqual({ error: 'injected fault' })
    expect(emulator.changes.size).toBe(0)
  })

  it('applies faults before authentication', async () => {
    emulator.inject('GET /v2/hello', { status: 429 })
    expect((await call('GET', '/v2/hello', { key: null })).status).toBe(429)
  })

  it('repeats a fault `times` times, then handles normally', async () => {
    emulator.inject('POST /v2/stream', { status: 502 }, 2)
    const statuses = []
    for (let i = 0; i < 3; i++) {
      statuses.push((await postJson('/v2/stream', { id: 'x', name: 'n', data: {} })).status)
    }
    expect(statuses).toEqual([502, 502, 202])
    expect(emulator.events.get('x')?.receipts).toBe(1)
  })

  it('keeps a permanent fault until reset()', async () => {
    emulator.inject('GET /v2/hello', { status: 500 }, Infinity)
    for (let i = 0; i < 5; i++) expect((await call('GET', '/v2/hello')).status).toBe(500)
    emulator.reset()
    expect((await call('GET', '/v2/hello')).status).toBe(200)
  })

  it('takes queued faults in order', async () => {
    emulator.inject('GET /v2/hello', { status: 500 })
    emulator.inject('GET /v2/hello', { status: 503 })
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await call('GET', '/v2/hello')).status)
    expect(statuses).toEqual([500, 503, 200])
  })

  it('matches one path segment with *, and only the route given', async () => {
    emulator.addHeartbeatMonitor('m1')
    emulator.inject('POST /v1/heartbeat/*', { status: 500 }, 2)
    expect((await call('GET', '/v2/hello')).status).toBe(200)
    expect((await call('POST', '/v1/heartbeat/other')).status).toBe(500)
    expect((await call('POST', '/v1/heartbeat/m1')).status).toBe(500)
    expect((await call('POST', '/v1/heartbeat/m1')).status).toBe(200)
  })

  it('delays, then answers normally', async () => {
    emulator.inject('GET /v2/hello', { delayMs: 300 })
    const started = Date.now()
    const answer = await call('GET', '/v2/hello')
    expect(Date.now() - started).toBeGreaterThanOrEqual(280)
    expect(answer).toMatchObject({ status: 200, body: 'OK' })
  })

  it('outlasts a client timeout with a long delay', async () => {
    emulator.inject('GET /v2/hello', { delayMs: 2000 })
    await expect(call('GET', '/v2/hello', { timeoutMs: 100 })).rejects.toThrow('client timeout')
    expect((await call('GET', '/v2/hello')).status).toBe(200)
  })

  it('resets the connection without answering', async () => {
    emulator.inject('POST /v2/change', { reset: true })
    await expect(postJson('/v2/change', { description: 'd' })).rejects.toThrow(
      /socket hang up|ECONNRESET/
    )
    expect(emulator.changes.size).toBe(0)
    expect(emulator.requests[0].body).toBe('{"description":"d"}')
    expect((await postJson('/v2/change', { description: 'd' })).status).toBe(201)
  })

  it('redirects with 302 by default, or the status given', async () => {
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

describe('request log', () => {
  it('records every request as received, rejected ones too, in arrival order', async () => {
    await call('POST', '/v2/change?dry=1', {
      body: '{"description":"é"}',
      contentType: 'application/json',
      key: 'wrong'
    })
    await call('GET', '/v2/event_results?ids=a%2Cb,c')
    await call('GET', '/nowhere')
    expect(emulator.requests).toHaveLength(3)
    const [change, results, nowhere] = emulator.requests
    expect(change).toMatchObject({
      method: 'POST',
      rawPath: '/v2/change',
      query: 'dry=1',
      body: '{"description":"é"}',
      bodyBytes: Buffer.byteLength(`{"description":"é"}`)
    })
    expect(change.headers['x-service-apikey']).toBe('wrong')
    expect(change.headers['content-type']).toBe('application/json')
    expect(results).toMatchObject({ rawPath: '/v2/event_results', query: 'ids=a%2Cb,c', body: '' })
    expect(nowhere).toMatchObject({ method: 'GET', rawPath: '/nowhere', query: '' })
  })

  it('filters by route with requestsTo', async () => {
    await call('GET', '/v2/change/one')
    await call('GET', '/v2/change/two')
    await call('GET', '/v2/hello')
    expect(emulator.requestsTo('GET /v2/change/*').map(r => r.rawPath)).toEqual([
      '/v2/change/one',
      '/v2/change/two'
    ])
    expect(emulator.requestsTo('POST /v2/change/*')).toEqual([])
  })
})

describe('reset()', () => {
  it('forgets changes, events, monitors, signals, the log and faults', async () => {
    emulator.addHeartbeatMonitor('m')
    await postJson('/v2/change', { description: 'd' })
    await postJson('/v2/stream', { id: 'e', name: 'n', data: {} })
    await call('POST', '/v1/heartbeat/m')
    emulator.inject('GET /v2/hello', { status: 500 })

    emulator.reset()

    expect(emulator.requests).toEqual([])
    expect(emulator.changes.size).toBe(0)
    expect(emulator.events.size).toBe(0)
    expect(emulator.eventOrder).toEqual([])
    expect(emulator.heartbeats.size).toBe(0)
    expect((await call('GET', '/v2/hello')).status).toBe(200)
    expect((await call('POST', '/v1/heartbeat/m')).status).toBe(404)
  })
})

describe('emulator/cli.ts', () => {
  it('starts, reports where it listens, serves, and stops on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cta-emulator-'))
    const certOut = join(dir, 'ca.pem')
    const readyFile = join(dir, 'ready.json')
    const env = { ...process.env }
    delete env.NODE_OPTIONS
    const child = spawn(
      process.execPath,
      [
        'emulator/cli.ts',
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
      ],
      { env, stdio: ['ignore', 'pipe', 'inherit'] }
    )
    const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)))
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let output = ''
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
    } finally {
      child.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
  })
})
