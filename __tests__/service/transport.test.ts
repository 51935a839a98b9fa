/**
 * The transport against the emulator (and raw loopback servers where a test writes the answer
 * byte by byte): what it sends, what it retries and for how long, its deadlines and caps, how it
 * words each failure, its proxy, and that no socket outlives an attempt or holds the process.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { generate } from 'selfsigned'
import { ServiceError } from '../../src/errors.ts'
import { Redactor } from '../../src/redact.ts'
import { API_KEY_HEADER, callName, type ServiceRequest } from '../../src/service/request.ts'
import { RETRY_POLICY } from '../../src/service/retry.ts'
import { Transport, type TransportOptions } from '../../src/service/transport.ts'
import { Emulator, type Fault } from '../../emulator/emulator.ts'
import { TEST_SERVICE_HOST, testCertificate, trustTestCertificate } from '../../emulator/tls.ts'
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.ts'
import { closedPort, startLoopback, type Handler, type Loopback } from '../support/loopback.ts'

const API_KEY = 'k3y-S3cr3t/value'
const PROXY_ENV = ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'] as const
const ADVICE = {
  changeWait: 'raise the timeout-seconds input',
  checkAddress: 'check the base-url input',
  checkApiKey: "check the api-key input and the key's permissions"
}

let emulator: Emulator
let savedEnv: Partial<Record<(typeof PROXY_ENV)[number], string>>
const transports: Transport[] = []
const servers: Array<{ close(): Promise<void> }> = []
let delays: number[]
let logs: string[]

function clearProxyEnv(): void {
  for (const name of PROXY_ENV) delete process.env[name]
}

function makeTransport(overrides: Partial<TransportOptions> = {}): Transport {
  const transport = new Transport({
    baseUrl: new URL(emulator.url),
    apiKey: API_KEY,
    timeoutMs: 5000,
    maxAttempts: 3,
    advice: ADVICE,
    userAgent: 'change-tracking-action-test/1.0',
    redactor: new Redactor(),
    log: message => logs.push(message),
    ...overrides,
    retry: {
      sleep: async ms => {
        delays.push(ms)
      },
      random: () => 0.5,
      backoffBaseMs: 100,
      backoffMaxMs: 1000,
      retryAfterMaxMs: 5000,
      ...overrides.retry
    }
  })
  transports.push(transport)
  return transport
}

/** The emulator's port under a name only the test proxy resolves. */
const proxiedBase = (port = emulator.port): URL => new URL(`https://${TEST_SERVICE_HOST}:${port}/`)

async function loopback(handle?: Handler): Promise<Loopback> {
  const server = await startLoopback(handle)
  servers.push(server)
  return server
}

/** The ServiceError a send rejects with; fails the test when it resolves. */
async function sendError(transport: Transport, request: ServiceRequest): Promise<ServiceError> {
  try {
    await transport.send(request)
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError)
    return error as ServiceError
  }
  throw new Error(`${callName(request)} succeeded but should have failed`)
}

const createChange: ServiceRequest = {
  method: 'POST',
  path: 'v2/change',
  body: '{"description":"deploy"}',
  contentType: 'application/json'
}
const hello: ServiceRequest = { method: 'GET', path: 'v2/hello' }
const fail = (route: string, fault: Fault, times = Infinity): void =>
  emulator.inject(route, fault, times)
const json = (status: number, body: unknown, headers?: Record<string, string>): Fault => ({
  status,
  body: JSON.stringify(body),
  headers
})

beforeAll(async () => {
  savedEnv = Object.fromEntries(PROXY_ENV.map(name => [name, process.env[name]]))
  clearProxyEnv()
  await trustTestCertificate()
  emulator = await Emulator.start({ apiKey: API_KEY })
})

afterAll(async () => {
  await emulator.close()
  for (const name of PROXY_ENV) {
    const value = savedEnv[name]
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
})

beforeEach(() => {
  emulator.reset()
  delays = []
  logs = []
})

afterEach(async () => {
  for (const transport of transports.splice(0)) transport.close()
  await Promise.all(servers.splice(0).map(server => server.close()))
  clearProxyEnv()
})

describe('what it sends', () => {
  it('sends the key header, User-Agent, Accept, Content-Type and Content-Length to the prefixed path', async () => {
    fail('POST /api/v2/change', json(200, { id: 'ok' }))
    const transport = makeTransport({ baseUrl: new URL(`${emulator.url}api/`) })
    const response = await transport.send({ ...createChange, query: 'dry=1' })

    expect(response.status).toBe(200)
    expect(response.body).toBe('{"id":"ok"}')
    const [received] = emulator.requests
    expect(emulator.requests).toHaveLength(1)
    expect(received.method).toBe('POST')
    expect(`${received.rawPath}?${received.query}`).toBe('/api/v2/change?dry=1')
    expect(received.headers[API_KEY_HEADER.toLowerCase()]).toBe(API_KEY)
    expect(received.headers['user-agent']).toBe('change-tracking-action-test/1.0')
    expect(received.headers['accept']).toBe('application/json')
    expect(received.headers['content-type']).toBe('application/json')
    expect(received.headers['content-length']).toBe('24')
    expect(received.body).toBe('{"description":"deploy"}')
  })

  it('sends a byte body without secrets as it is, with its content type and byte length', async () => {
    const text = '{"name":"é","data":"https://host/x"}\n{"name":"b","data":2}\n'
    const ndjson = new TextEncoder().encode(text)
    await makeTransport().send({
      method: 'POST',
      path: 'v2/stream',
      body: ndjson,
      contentType: 'application/x-ndjson'
    })
    const [received] = emulator.requests
    expect(received.headers['content-type']).toBe('application/x-ndjson')
    expect(received.headers['content-length']).toBe(String(ndjson.byteLength))
    expect(received.body).toBe(text)
  })

  it('sends no secret in a body: the token, the key and a password in a URL become ***', async () => {
    const token = 'ghs_pastedIntoACommitMessage0000000000'
    const redactor = new Redactor()
    redactor.add(token)
    const message = `Fix login (token ${token}, key ${API_KEY}, https://bot:hunter2@git.example/x)`
    await makeTransport({ redactor }).send({
      ...createChange,
      body: JSON.stringify({
        description: message,
        custom_metadata: JSON.stringify({ m: message })
      })
    })
    const [received] = emulator.requests
    const redacted = 'Fix login (token ***, key ***, https://***@git.example/x)'
    expect(JSON.parse(received.body)).toEqual({
      description: redacted,
      custom_metadata: JSON.stringify({ m: redacted })
    })
    expect(received.headers['content-length']).toBe(String(Buffer.byteLength(received.body)))
  })

  it('sends a POST without a body with Content-Length 0 and no Content-Type, a GET with neither', async () => {
    emulator.addHeartbeatMonitor('abc')
    const transport = makeTransport()
    await transport.send({ method: 'POST', path: 'v1/heartbeat/abc' })
    await transport.send(hello)
    const [post, get] = emulator.requests
    expect(post.headers['content-length']).toBe('0')
    expect(post.headers['content-type']).toBeUndefined()
    expect(get.headers['content-length']).toBeUndefined()
    expect(get.headers['content-type']).toBeUndefined()
    expect(get.headers[API_KEY_HEADER.toLowerCase()]).toBe(API_KEY)
  })

  it('sends nothing once closed', async () => {
    const transport = makeTransport()
    transport.close()
    await expect(transport.send(hello)).rejects.toThrow(
      'GET /v2/hello was not sent: the transport is closed.'
    )
    expect(emulator.requests).toHaveLength(0)
  })

  it.each([200, 201, 202, 204])('resolves on HTTP %i', async status => {
    fail('POST /v2/change', { status, body: status === 204 ? '' : '["e1"]' })
    const response = await makeTransport().send(createChange)
    expect(response.status).toBe(status)
    expect(response.body).toBe(status === 204 ? '' : '["e1"]')
    expect(emulator.requests).toHaveLength(1)
  })
})

describe('retries', () => {
  it('retries a 5XX and succeeds, sending exactly as many requests as attempts', async () => {
    fail('POST /v2/change', json(503, { message: 'maintenance' }), 2)
    const response = await makeTransport({ maxAttempts: 4 }).send(createChange)

    expect(response.status).toBe(201)
    expect(emulator.requests).toHaveLength(3)
    // Full jitter with random() = 0.5: half of 100 ms, then half of 200 ms.
    expect(delays).toEqual([50, 100])
    expect(logs).toEqual([
      'POST /v2/change: HTTP 503 Service Unavailable; retry 1 of 3 in 0.1 s',
      'POST /v2/change: HTTP 503 Service Unavailable; retry 2 of 3 in 0.1 s'
    ])
  })

  it('gives up after maxAttempts on a permanent 5XX, as an outage naming call, status, message and attempts', async () => {
    fail('POST /v2/change', json(500, { error: 'database down' }))
    const error = await sendError(makeTransport({ maxAttempts: 3 }), createChange)

    expect(emulator.requests).toHaveLength(3)
    expect(delays).toHaveLength(2)
    expect(error).toMatchObject({ kind: 'outage', status: 500, call: 'POST /v2/change' })
    expect(error.message).toBe(
      'POST /v2/change failed with HTTP 500 Internal Server Error after 3 attempts: database down. ' +
        'The service is unavailable: try again later.'
    )
  })

  it('honours Retry-After in seconds on a 429, capped at retryAfterMaxMs', async () => {
    fail('POST /v2/change', { status: 429, headers: { 'Retry-After': '2' } }, 1)
    fail('POST /v2/change', { status: 429, headers: { 'Retry-After': '3600' } }, 1)
    const response = await makeTransport({ maxAttempts: 3 }).send(createChange)

    expect(response.status).toBe(201)
    expect(delays).toEqual([2000, 5000])
  })

  it('honours Retry-After as an HTTP date', async () => {
    const inThreeSeconds = new Date(Date.now() + 3000).toUTCString()
    fail('POST /v2/change', { status: 503, headers: { 'Retry-After': inThreeSeconds } }, 1)
    await makeTransport().send(createChange)

    expect(delays).toHaveLength(1)
    // The date has whole seconds, so up to a second of the wait is lost to rounding.
    expect(delays[0]).toBeGreaterThan(1000)
    expect(delays[0]).toBeLessThanOrEqual(3000)
  })

  it('reports a persistent 429 as an outage: rate limited', async () => {
    fail('POST /v2/change', json(429, { message: 'slow down' }, { 'Retry-After': '1' }))
    const error = await sendError(makeTransport({ maxAttempts: 2 }), createChange)
    expect(emulator.requests).toHaveLength(2)
    expect(error.kind).toBe('outage')
    expect(error.message).toMatch(/HTTP 429 Too Many Requests after 2 attempts: slow down\./)
    expect(error.message).toMatch(/rate limiting/)
  })

  it('retries a connection reset and then succeeds', async () => {
    fail('POST /v2/change', { reset: true }, 2)
    const response = await makeTransport({ maxAttempts: 3 }).send(createChange)

    expect(response.status).toBe(201)
    expect(emulator.requests).toHaveLength(3)
    expect(delays).toHaveLength(2)
    expect(logs[0]).toMatch(/^POST \/v2\/change: ECONNRESET \(.+\); retry 1 of 2 in 0\.1 s$/)
  })

  it('retries a refused connection, then reports an outage naming the host and the code', async () => {
    const port = await closedPort()
    const error = await sendError(
      makeTransport({ baseUrl: new URL(`https://127.0.0.1:${port}/`), maxAttempts: 2 }),
      hello
    )
    expect(delays).toHaveLength(1)
    expect(error.kind).toBe('outage')
    expect(error.status).toBeUndefined()
    expect(error.message).toContain(
      `GET /v2/hello could not reach https://127.0.0.1:${port} after 2 attempts`
    )
    expect(error.message).toContain('ECONNREFUSED')
    expect(error.message).toMatch(/check the base-url input, and HTTPS_PROXY \/ NO_PROXY/)
  })

  it('retries an oversized response header like a 5XX, and ends one that persists as an outage', async () => {
    const hugeHeader: Fault = {
      status: 503,
      body: 'busy',
      headers: { 'X-Padding': 'p'.repeat(20_000) }
    }
    fail('GET /v2/hello', hugeHeader, 1)
    expect((await makeTransport({ maxAttempts: 2 }).send(hello)).status).toBe(200)
    expect(logs[0]).toMatch(/^GET \/v2\/hello: HPE_HEADER_OVERFLOW \(.+\); retry 1 of 1/)

    fail('GET /v2/hello', hugeHeader)
    const error = await sendError(makeTransport({ maxAttempts: 2 }), hello)
    expect(emulator.requests).toHaveLength(4)
    expect(error.kind).toBe('outage')
    expect(error.message).toMatch(
      /^GET \/v2\/hello got a malformed answer from https:\/\/localhost:\d+ after 2 attempts \(HPE_HEADER_OVERFLOW: /
    )
  })
})

describe('deadlines and limits', () => {
  it('bounds each attempt against a service that never answers', async () => {
    fail('POST /v2/change', { hang: true })
    const error = await sendError(makeTransport({ timeoutMs: 300, maxAttempts: 2 }), createChange)

    expect(emulator.requests).toHaveLength(2)
    expect(error.kind).toBe('outage')
    expect(error.message).toBe(
      'POST /v2/change got no complete answer within 0.3 s after 2 attempts. ' +
        'The service is unavailable or too slow: try again later, or raise the timeout-seconds input.'
    )
    expect(logs).toEqual([
      'POST /v2/change: no complete answer within 0.3 s; retry 1 of 1 in 0.1 s'
    ])
  })

  it('bounds an attempt as a whole against a service that trickles its body forever', async () => {
    const service = await loopback((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' })
      response.write('[')
      const timer = setInterval(() => response.write(' '), 50)
      response.on('close', () => clearInterval(timer))
    })
    const transport = makeTransport({
      baseUrl: new URL(service.url),
      timeoutMs: 300,
      maxAttempts: 1
    })
    const error = await sendError(transport, createChange)

    expect(service.requests).toBe(1)
    expect(error.kind).toBe('outage')
    expect(error.message).toMatch(/^POST \/v2\/change got no complete answer within 0\.3 s\. /)
  })

  it('refuses a response over the size cap as an error naming the call and the cap, never cut data', async () => {
    fail('GET /v2/hello', { status: 200, bodyBytes: 1024 * 1024 + 1 })
    const error = await sendError(makeTransport({ maxResponseBytes: 1024 * 1024 }), hello)

    expect(emulator.requests).toHaveLength(1)
    expect(error.kind).toBe('protocol')
    expect(error.message).toBe(
      'GET /v2/hello answered with more than 1 MiB (the response size cap), so the answer was not used. ' +
        "Check the base-url input: it must point at the service's root."
    )
  })

  it('takes an answer of exactly the size cap', async () => {
    fail('GET /v2/hello', { status: 200, bodyBytes: 1000 })
    const response = await makeTransport({ maxResponseBytes: 1000 }).send(hello)
    expect(response.body).toHaveLength(1000)
  })
})

describe('refusals are not retried', () => {
  it.each([
    [400, /Check the values sent/],
    [401, /rejected the API key: check the api-key input and the key's permissions/],
    [403, /rejected the API key/],
    [404, /Check the base-url input .* and any id in the request/],
    [413, /too large/],
    [422, /Check the values sent/]
  ])('HTTP %i: one request, kind rejected, with advice', async (status, advice) => {
    fail('POST /v2/change', json(status, { message: 'nope' }))
    const error = await sendError(makeTransport({ maxAttempts: 3 }), createChange)

    expect(emulator.requests).toHaveLength(1)
    expect(delays).toEqual([])
    expect(error).toMatchObject({ kind: 'rejected', status })
    expect(error.message).toMatch(new RegExp(`^POST /v2/change was rejected with HTTP ${status} `))
    expect(error.message).toContain(': nope. ')
    expect(error.message).toMatch(advice)
  })

  it('does not follow a redirect to another origin, and names its target by scheme, host and port only', async () => {
    const other = await Emulator.start({ apiKey: API_KEY })
    servers.push(other)
    const location = `${other.url}v2/hello?key=${encodeURIComponent(API_KEY)}`
    fail('GET /v2/hello', { redirect: location, status: 301 })
    const error = await sendError(makeTransport({ maxAttempts: 3 }), hello)

    expect(emulator.requests).toHaveLength(1)
    expect(other.requests).toHaveLength(0)
    expect(error).toMatchObject({ kind: 'protocol', status: 301 })
    expect(error.message).toContain(
      `GET /v2/hello was answered with HTTP 301 Moved Permanently, a redirect to https://localhost:${other.port}.`
    )
    expect(error.message).toMatch(/Redirects are never followed/)
    expect(error.message).toMatch(/check the base-url input and use that address/)
    expect(error.message).not.toContain(API_KEY)
    expect(error.message).not.toContain(encodeURIComponent(API_KEY))
  })

  it('redacts a key the service echoes in an error body, from the message and stack', async () => {
    fail('GET /v2/hello', json(401, { message: `invalid key ${API_KEY}` }))
    const error = await sendError(makeTransport(), hello)

    expect(error.message).toContain(': invalid key ***. ')
    expect(error.stack).not.toContain(API_KEY)
  })

  it('redacts a key echoed in a retried 5XX body from the log lines too', async () => {
    fail('GET /v2/hello', {
      status: 502,
      body: `<html><body>upstream refused ${API_KEY}</body></html>`,
      headers: { 'Content-Type': 'text/html' }
    })
    const error = await sendError(makeTransport({ maxAttempts: 2 }), hello)
    expect(error.message).toContain(': upstream refused ***. ')
    expect([error.message, ...logs].join('\n')).not.toContain(API_KEY)
  })

  it('does not retry a certificate this process does not trust: protocol, with a NODE_EXTRA_CA_CERTS hint', async () => {
    const untrusted = await generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256'
    })
    const stranger = await Emulator.start({
      cert: { key: untrusted.private, cert: untrusted.cert, certPath: '' }
    })
    servers.push(stranger)
    const error = await sendError(
      makeTransport({ baseUrl: new URL(stranger.url), maxAttempts: 3 }),
      hello
    )
    expect(stranger.requests).toHaveLength(0)
    expect(delays).toEqual([])
    expect(error.kind).toBe('protocol')
    expect(error.message).toMatch(
      new RegExp(
        `the TLS certificate of https://localhost:${stranger.port} is not trusted \\([A-Z_]+: [^)]+\\)\\. `
      )
    )
    expect(error.message).toContain('NODE_EXTRA_CA_CERTS')
    expect(error.message).not.toContain('--use-system-ca')
  })
})

describe('a proxy', () => {
  let proxy: ConnectProxy

  beforeAll(async () => {
    proxy = await startConnectProxy({
      route: (host, port) =>
        host === TEST_SERVICE_HOST ? { host: '127.0.0.1', port } : { host, port }
    })
  })

  afterAll(async () => {
    await proxy.close()
  })

  beforeEach(() => {
    proxy.connects.length = 0
    proxy.proxyAuthorizations.length = 0
  })

  it('tunnels through HTTPS_PROXY to a host only the proxy can reach', async () => {
    process.env['HTTPS_PROXY'] = proxy.url
    const response = await makeTransport({ baseUrl: proxiedBase() }).send(createChange)

    expect(response.status).toBe(201)
    expect(proxy.connects).toEqual([`${TEST_SERVICE_HOST}:${emulator.port}`])
    expect(emulator.requests).toHaveLength(1)
    expect(emulator.requests[0].headers['host']).toBe(`${TEST_SERVICE_HOST}:${emulator.port}`)
  })

  it('passes proxy credentials from the proxy URL, and never prints the password', async () => {
    process.env['https_proxy'] = `http://robot:p%40ss@127.0.0.1:${proxy.port}`
    fail('GET /v2/hello', json(400, { message: 'proxy password was p@ss' }))
    const error = await sendError(makeTransport({ baseUrl: proxiedBase() }), hello)

    expect(proxy.proxyAuthorizations).toEqual([
      `Basic ${Buffer.from('robot:p@ss').toString('base64')}`
    ])
    expect(error.message).toContain('proxy password was ***')
    expect(error.message).not.toContain('p%40ss')
  })

  it('is bypassed for NO_PROXY hosts; a host that does not exist is a configuration error, not retried', async () => {
    process.env['HTTPS_PROXY'] = proxy.url
    process.env['NO_PROXY'] = TEST_SERVICE_HOST
    const error = await sendError(makeTransport({ baseUrl: proxiedBase(), maxAttempts: 3 }), hello)

    expect(proxy.connects).toEqual([])
    expect(emulator.requests).toHaveLength(0)
    expect(delays).toEqual([])
    expect(error.kind).toBe('configuration')
    expect(error.message).toBe(
      `GET /v2/hello was not sent: the host of https://${TEST_SERVICE_HOST}:${emulator.port} was not found (ENOTFOUND). ` +
        'Check the base-url input: the host name may be mistyped.'
    )
  })

  it('is never used for loopback', async () => {
    process.env['HTTPS_PROXY'] = proxy.url
    await makeTransport().send(hello)
    expect(proxy.connects).toEqual([])
    expect(emulator.requests).toHaveLength(1)
  })

  it.each([
    [407, /Check the proxy user name and password in HTTPS_PROXY\.$/],
    [403, /The proxy does not allow this connection/]
  ])(
    'answering %i to CONNECT is a configuration error naming the proxy by host and port, not retried',
    async (status, advice) => {
      const refusing = await startConnectProxy({ refuseWith: status })
      servers.push(refusing)
      process.env['HTTPS_PROXY'] = `http://robot:pr0xy-pw@127.0.0.1:${refusing.port}`
      const error = await sendError(
        makeTransport({ baseUrl: proxiedBase(), maxAttempts: 3 }),
        hello
      )
      expect(refusing.connects).toHaveLength(1)
      expect(delays).toEqual([])
      expect(error.kind).toBe('configuration')
      expect(error.message).toContain(
        `GET /v2/hello was not sent: the proxy 127.0.0.1:${refusing.port} refused to open a tunnel to the service with HTTP ${status} `
      )
      expect(error.message).toMatch(advice)
      expect(error.message).not.toMatch(/robot|pr0xy-pw/)
    }
  )

  it("retries the proxy's own trouble (502 to CONNECT) and ends as an outage", async () => {
    const failing = await startConnectProxy({ refuseWith: 502 })
    servers.push(failing)
    process.env['HTTPS_PROXY'] = failing.url
    const error = await sendError(makeTransport({ baseUrl: proxiedBase(), maxAttempts: 2 }), hello)
    expect(failing.connects).toHaveLength(2)
    expect(error.kind).toBe('outage')
    expect(error.message).toContain(
      `the proxy 127.0.0.1:${failing.port} answered HTTP 502 Bad Gateway after 2 attempts`
    )
  })
})

describe('no socket outlives its attempt', () => {
  const ok: Handler = (_request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' })
    response.end('{"id":"ok"}')
  }
  const silence: Handler = () => undefined

  it('after a success, keeping only the idle connection for the next request until close()', async () => {
    const service = await loopback(ok)
    const transport = makeTransport({ baseUrl: new URL(service.url) })
    await transport.send(hello)
    await transport.send(hello)
    expect(service.connections).toBe(1)
    transport.close()
    await service.allClosed()
  })

  it('after close() during an attempt, which ends the request unretried and says so', async () => {
    const service = await loopback(silence)
    const transport = makeTransport({ baseUrl: new URL(service.url), maxAttempts: 3 })
    service.handle = () => transport.close()
    await expect(transport.send(hello)).rejects.toThrow(
      'GET /v2/hello was stopped: the transport is closed.'
    )
    expect(service.requests).toBe(1)
    expect(delays).toEqual([])
    await service.allClosed()
  })

  it('after a timeout, on a kept-alive connection too', async () => {
    const service = await loopback(ok)
    const transport = makeTransport({
      baseUrl: new URL(service.url),
      timeoutMs: 200,
      maxAttempts: 1
    })
    await transport.send(hello)
    service.handle = silence
    await sendError(transport, hello)
    expect(service.connections).toBe(1)
    await service.allClosed()
  })

  it('after an answer over the size cap', async () => {
    const service = await loopback((_request, response) => response.end('x'.repeat(50_000)))
    await sendError(makeTransport({ baseUrl: new URL(service.url), maxResponseBytes: 1000 }), hello)
    await service.allClosed()
  })

  it('after a success through a proxy tunnel', async () => {
    const service = await loopback(ok)
    const proxy = await startConnectProxy({ route: (_host, port) => ({ host: '127.0.0.1', port }) })
    servers.push(proxy)
    process.env['HTTPS_PROXY'] = proxy.url
    const transport = makeTransport({ baseUrl: proxiedBase(service.port) })
    await transport.send(hello)
    await transport.send(hello)
    expect(proxy.connects).toHaveLength(1)
    transport.close()
    await service.allClosed()
  })

  it('after a timeout while a proxy never answers CONNECT', async () => {
    const silent = await loopback()
    process.env['HTTPS_PROXY'] = silent.url
    const error = await sendError(
      makeTransport({ baseUrl: proxiedBase(), timeoutMs: 200, maxAttempts: 2 }),
      hello
    )
    expect(error.kind).toBe('outage')
    expect(silent.connections).toBe(2)
    await silent.allClosed()
  })

  it('nor holds a process open: it exits by itself after a service or a proxy that never answers', async () => {
    fail('POST /v2/change', { hang: true })
    const silent = await loopback()
    const { certPath } = await testCertificate()
    const [direct, proxied] = await Promise.all([
      sendInChild({ BASE_URL: emulator.url, NODE_EXTRA_CA_CERTS: certPath }),
      sendInChild({ BASE_URL: proxiedBase().href, HTTPS_PROXY: silent.url })
    ])
    expect(direct).toEqual({ output: 'FAILED outage', signal: null })
    expect(proxied).toEqual({ output: 'FAILED outage', signal: null })
    // The second attempt reaches the service only when the first's handshake fits in its 200 ms.
    expect(emulator.requests.length).toBeGreaterThan(0)
    expect(silent.connections).toBe(2)
  })
})

/** One send through the transport in a child `node`, which is killed if it has not exited in 20 s. */
function sendInChild(
  env: Record<string, string>
): Promise<{ output: string; signal: string | null }> {
  const source = (file: string): string =>
    JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../src', file)).href)
  const script = join(mkdtempSync(join(tmpdir(), 'cta-exit-')), 'send.mjs')
  writeFileSync(
    script,
    `import { Transport } from ${source('service/transport.ts')}
import { Redactor } from ${source('redact.ts')}
const advice = { changeWait: '', checkAddress: '', checkApiKey: '' }
const transport = new Transport({ baseUrl: new URL(process.env.BASE_URL), apiKey: ${JSON.stringify(API_KEY)},
  timeoutMs: 200, maxAttempts: 2, userAgent: 'exit-test', redactor: new Redactor(), advice, retry: { backoffBaseMs: 10 } })
await transport.send({ method: 'POST', path: 'v2/change', body: '{}' }).then(
  () => console.log('SENT'), error => console.log('FAILED ' + error.kind))
`
  )
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env }
  for (const name of [...PROXY_ENV, 'NODE_OPTIONS']) if (!(name in env)) delete childEnv[name]
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { env: childEnv })
    let output = ''
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.on('error', reject)
    child.on('exit', (_code, signal) => {
      clearTimeout(killer)
      resolve({ output: output.trim(), signal })
    })
  })
}

describe('the outage budget', () => {
  it('bounds a change and then a heartbeat against a hanging service by one budget in all', async () => {
    fail('POST /v2/change', { hang: true })
    const transport = makeTransport({
      timeoutMs: 300,
      maxAttempts: 4,
      retry: {
        outageBudgetMs: 600,
        minRetryAttemptMs: 50,
        sleep: ms => new Promise(r => setTimeout(r, ms))
      }
    })
    const first = await sendError(transport, createChange)
    const second = await sendError(transport, { method: 'POST', path: 'v1/heartbeat/m1' })

    expect(first.kind).toBe('outage')
    expect(first.message).toContain("(what was left of this run's outage budget) after 2 attempts")
    expect(emulator.requests).toHaveLength(2)
    expect(second.kind).toBe('outage')
    expect(second.message).toBe(
      "POST /v1/heartbeat/m1 was not sent: the service was unavailable for this run's whole outage budget of 0.6 s already. Try again later."
    )
  })

  it('with the defaults, a change and a heartbeat answered 503 with Retry-After: 30 cost at most 60 s of waits', async () => {
    fail('POST /v2/change', json(503, { message: 'down' }, { 'Retry-After': '30' }))
    fail('POST /v1/heartbeat/*', json(503, { message: 'down' }, { 'Retry-After': '30' }))
    const transport = makeTransport({
      timeoutMs: 30_000,
      maxAttempts: 4,
      retry: { ...RETRY_POLICY, sleep: async ms => void delays.push(ms) }
    })
    const first = await sendError(transport, createChange)
    const second = await sendError(transport, { method: 'POST', path: 'v1/heartbeat/m1' })

    expect(delays).toEqual([30_000])
    expect(first.message).toContain('after 2 attempts')
    expect(first.message).toContain(
      "Retries stopped there: another would overrun this run's outage budget of 60 s."
    )
    expect(second.message).not.toContain('attempts')
    expect(emulator.requests).toHaveLength(3)
  })

  it('is never charged for healthy answers, however many or slow', async () => {
    const service = await loopback((_request, response) =>
      setTimeout(() => response.end('{"id":"ok"}'), 50)
    )
    const transport = makeTransport({
      baseUrl: new URL(service.url),
      retry: { outageBudgetMs: 250, minRetryAttemptMs: 10 }
    })
    for (let i = 0; i < 6; i++) await transport.send(createChange)
    expect(service.requests).toBe(6)
  })
})
