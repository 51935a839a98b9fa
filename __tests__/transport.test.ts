import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { createServer, type Server, type ServerOptions as HttpsServerOptions } from 'node:https'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import { createServer as createTcpServer, type AddressInfo } from 'node:net'
import { generate } from 'selfsigned'
import { API_KEY_HEADER } from '../src/service/transport.ts'
import { ServiceError } from '../src/errors.ts'
import { Redactor } from '../src/redact.ts'
import {
  bodyExcerpt,
  extractServiceMessage,
  parseRetryAfterMs,
  retryDelayMs,
  Transport,
  unexpectedResponse,
  type RetryDelayPolicy,
  type ServiceRequest,
  type TransportOptions
} from '../src/service/transport.ts'
import { startConnectProxy, type ConnectProxy } from './support/connect-proxy.ts'
import { TEST_SERVICE_HOST, trustTestCertificate, type TestCertificate } from '../emulator/tls.ts'

const API_KEY = 'k3y-S3cr3t/value'
const PROXY_ENV = ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'] as const

interface RecordedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

type Handler = (req: IncomingMessage, res: ServerResponse, index: number) => void

/** A loopback HTTPS server whose behaviour each test sets through `handle`. */
interface TestServer {
  port: number
  origin: string
  requests: RecordedRequest[]
  /** TCP connections accepted (counted before TLS, so refused handshakes count too). */
  connections: number
  handle: Handler
  close(): Promise<void>
}

const okJson: Handler = (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' })
  res.end('{"id":"ok"}')
}

async function startServer(tlsOptions: HttpsServerOptions, handle = okJson): Promise<TestServer> {
  const server: Server = createServer(tlsOptions)
  const state: TestServer = {
    port: 0,
    origin: '',
    requests: [],
    connections: 0,
    handle,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  server.on('connection', () => state.connections++)
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const index = state.requests.length
      state.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8')
      })
      state.handle(req, res, index)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  state.port = (server.address() as AddressInfo).port
  state.origin = `https://127.0.0.1:${state.port}`
  return state
}

function respond(status: number, body = '', headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
    res.end(body)
  }
}

/** Answers with `failing` for the first `count` requests, then with `ok`. */
function failFirst(count: number, failing: Handler, ok: Handler = okJson): Handler {
  return (req, res, index) => (index < count ? failing(req, res, index) : ok(req, res, index))
}

/** A free loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createTcpServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>(resolve => server.close(() => resolve()))
  return port
}

let certificate: TestCertificate
let service: TestServer
let savedEnv: Partial<Record<(typeof PROXY_ENV)[number], string>>
const transports: Transport[] = []
let delays: number[]
let logs: string[]

function clearProxyEnv(): void {
  for (const name of PROXY_ENV) delete process.env[name]
}

function makeTransport(overrides: Partial<TransportOptions> = {}): Transport {
  const transport = new Transport({
    baseUrl: new URL(`${service.origin}/`),
    apiKey: API_KEY,
    timeoutMs: 5000,
    maxAttempts: 3,
    userAgent: 'change-tracking-action-test/1.0',
    redactor: new Redactor(),
    log: message => logs.push(message),
    sleep: async ms => {
      delays.push(ms)
    },
    random: () => 0.5,
    backoffBaseMs: 100,
    backoffMaxMs: 1000,
    retryAfterMaxMs: 5000,
    ...overrides
  })
  transports.push(transport)
  return transport
}

/** The ServiceError a send rejects with; fails the test when it resolves. */
async function sendError(transport: Transport, request: ServiceRequest): Promise<ServiceError> {
  try {
    await transport.send(request)
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError)
    return error as ServiceError
  }
  throw new Error(`${Transport.callName(request)} succeeded but should have failed`)
}

const createChange: ServiceRequest = {
  method: 'POST',
  path: 'v2/change',
  body: '{"description":"deploy"}',
  contentType: 'application/json'
}
const hello: ServiceRequest = { method: 'GET', path: 'v2/hello' }

beforeAll(async () => {
  savedEnv = Object.fromEntries(PROXY_ENV.map(name => [name, process.env[name]]))
  clearProxyEnv()
  certificate = await trustTestCertificate()
  service = await startServer({ key: certificate.key, cert: certificate.cert })
})

afterAll(async () => {
  await service.close()
  for (const name of PROXY_ENV) {
    const value = savedEnv[name]
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
})

beforeEach(() => {
  service.requests = []
  service.connections = 0
  service.handle = okJson
  delays = []
  logs = []
})

afterEach(() => {
  for (const transport of transports.splice(0)) transport.close()
})

describe('Transport.url and callName', () => {
  it('builds URLs below a base path prefix, with the query', () => {
    const transport = makeTransport({ baseUrl: new URL('https://service.example/api/') })
    const request: ServiceRequest = {
      method: 'GET',
      path: 'v2/change/a%2Fb',
      query: 'ids=a%2Cb,c'
    }
    expect(transport.url(request).href).toBe(
      'https://service.example/api/v2/change/a%2Fb?ids=a%2Cb,c'
    )
    expect(Transport.callName(request)).toBe('GET /v2/change/a%2Fb')
  })

  it('adds the trailing slash a base URL lacks, and keeps a leading-slash path below the prefix', () => {
    const transport = makeTransport({ baseUrl: new URL('https://service.example/api') })
    expect(transport.url({ method: 'GET', path: '/v2/hello' }).href).toBe(
      'https://service.example/api/v2/hello'
    )
    expect(transport.url({ method: 'GET', path: '//other.example/v2/hello' }).origin).toBe(
      'https://service.example'
    )
  })

  it('refuses a path that climbs out of the service root', () => {
    const transport = makeTransport({ baseUrl: new URL('https://service.example/api/') })
    expect(() => transport.url({ method: 'GET', path: '../admin' })).toThrow(
      /leaves the service root/
    )
  })

  it('refuses a base URL that is not https', () => {
    expect(() => makeTransport({ baseUrl: new URL('http://service.example/') })).toThrow(
      /must use https/
    )
  })
})

describe('Transport.send: requests and successes', () => {
  it('sends the key header, User-Agent, Accept, Content-Type and Content-Length to the prefixed path', async () => {
    const transport = makeTransport({ baseUrl: new URL(`${service.origin}/api/`) })
    const response = await transport.send({ ...createChange, query: 'dry=1' })

    expect(response.status).toBe(200)
    expect(response.body).toBe('{"id":"ok"}')
    expect(service.requests).toHaveLength(1)
    const [received] = service.requests
    expect(received.method).toBe('POST')
    expect(received.url).toBe('/api/v2/change?dry=1')
    expect(received.headers[API_KEY_HEADER.toLowerCase()]).toBe(API_KEY)
    expect(received.headers['user-agent']).toBe('change-tracking-action-test/1.0')
    expect(received.headers['accept']).toBe('application/json')
    expect(received.headers['content-type']).toBe('application/json')
    expect(received.headers['content-length']).toBe(
      String(Buffer.byteLength(createChange.body as string))
    )
    expect(received.body).toBe('{"description":"deploy"}')
  })

  it('sends a byte body with its content type and byte length', async () => {
    const ndjson = new TextEncoder().encode('{"name":"é"}\n{"name":"b"}\n')
    await makeTransport().send({
      method: 'POST',
      path: 'v2/stream',
      body: ndjson,
      contentType: 'application/x-ndjson'
    })
    const [received] = service.requests
    expect(received.headers['content-type']).toBe('application/x-ndjson')
    expect(received.headers['content-length']).toBe(String(ndjson.byteLength))
    expect(received.body).toBe('{"name":"é"}\n{"name":"b"}\n')
  })

  it('sends a POST without a body with Content-Length 0 and no Content-Type, a GET with neither', async () => {
    const transport = makeTransport()
    await transport.send({ method: 'POST', path: 'v1/heartbeat/abc' })
    await transport.send(hello)
    const [post, get] = service.requests
    expect(post.headers['content-length']).toBe('0')
    expect(post.headers['content-type']).toBeUndefined()
    expect(get.headers['content-length']).toBeUndefined()
    expect(get.headers['content-type']).toBeUndefined()
    expect(get.headers[API_KEY_HEADER.toLowerCase()]).toBe(API_KEY)
  })

  it.each([200, 201, 202, 204])('resolves on HTTP %i', async status => {
    service.handle = respond(status, status === 204 ? '' : '["e1"]')
    const response = await makeTransport().send(createChange)
    expect(response.status).toBe(status)
    expect(response.body).toBe(status === 204 ? '' : '["e1"]')
    expect(service.requests).toHaveLength(1)
  })
})

describe('Transport.send: retries', () => {
  it('retries a 5XX and succeeds, sending exactly as many requests as attempts', async () => {
    service.handle = failFirst(2, respond(503, '{"message":"maintenance"}'))
    const response = await makeTransport({ maxAttempts: 4 }).send(createChange)

    expect(response.status).toBe(200)
    expect(service.requests).toHaveLength(3)
    // Full jitter with random() = 0.5: half of 100 ms, then half of 200 ms.
    expect(delays).toEqual([50, 100])
    expect(logs).toEqual([
      'POST /v2/change: HTTP 503 Service Unavailable; retry 1 of 3 in 0.1 s',
      'POST /v2/change: HTTP 503 Service Unavailable; retry 2 of 3 in 0.1 s'
    ])
  })

  it('gives up after maxAttempts on a permanent 5XX, as an outage naming call, status, message and attempts', async () => {
    service.handle = respond(500, '{"error":"database down"}')
    const error = await sendError(makeTransport({ maxAttempts: 3 }), createChange)

    expect(service.requests).toHaveLength(3)
    expect(delays).toHaveLength(2)
    expect(error.kind).toBe('outage')
    expect(error.status).toBe(500)
    expect(error.attempts).toBe(3)
    expect(error.call).toBe('POST /v2/change')
    expect(error.serviceMessage).toBe('database down')
    expect(error.message).toBe(
      'POST /v2/change failed with HTTP 500 Internal Server Error after 3 attempts: database down. ' +
        'The service is unavailable: try again later.'
    )
  })

  it('honours Retry-After in seconds on a 429, capped at retryAfterMaxMs', async () => {
    service.handle = (req, res, index) =>
      index === 0
        ? respond(429, '', { 'Retry-After': '2' })(req, res, index)
        : index === 1
          ? respond(429, '', { 'Retry-After': '3600' })(req, res, index)
          : okJson(req, res, index)
    const response = await makeTransport({ maxAttempts: 3 }).send(createChange)

    expect(response.status).toBe(200)
    expect(delays).toEqual([2000, 5000])
  })

  it('honours Retry-After as an HTTP date', async () => {
    const inThreeSeconds = new Date(Date.now() + 3000).toUTCString()
    service.handle = failFirst(1, respond(503, '', { 'Retry-After': inThreeSeconds }))
    await makeTransport().send(createChange)

    expect(delays).toHaveLength(1)
    // The date has whole seconds, so up to a second of the wait is lost to rounding.
    expect(delays[0]).toBeGreaterThan(1500)
    expect(delays[0]).toBeLessThanOrEqual(3000)
  })

  it('reports a persistent 429 as an outage: rate limited', async () => {
    service.handle = respond(429, '{"message":"slow down"}', { 'Retry-After': '1' })
    const error = await sendError(makeTransport({ maxAttempts: 2 }), createChange)
    expect(service.requests).toHaveLength(2)
    expect(error.kind).toBe('outage')
    expect(error.message).toMatch(/HTTP 429 Too Many Requests after 2 attempts: slow down\./)
    expect(error.message).toMatch(/rate limiting/)
  })

  it('retries a connection reset and then succeeds', async () => {
    service.handle = failFirst(2, req => req.socket.destroy())
    const response = await makeTransport({ maxAttempts: 3 }).send(createChange)

    expect(response.status).toBe(200)
    expect(service.requests).toHaveLength(3)
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
    expect(error.attempts).toBe(2)
    expect(error.message).toContain(
      `GET /v2/hello could not reach 127.0.0.1:${port} after 2 attempts`
    )
    expect(error.message).toContain('ECONNREFUSED')
    expect(error.message).toMatch(/base-url.*HTTPS_PROXY \/ NO_PROXY/)
  })
})

describe('Transport.send: deadlines and limits', () => {
  it('bounds each attempt against a server that never answers', async () => {
    service.handle = () => {}
    const started = Date.now()
    const error = await sendError(makeTransport({ timeoutMs: 300, maxAttempts: 2 }), createChange)
    const elapsed = Date.now() - started

    expect(service.requests).toHaveLength(2)
    expect(elapsed).toBeGreaterThanOrEqual(550)
    expect(elapsed).toBeLessThan(2000)
    expect(error.kind).toBe('outage')
    expect(error.message).toBe(
      'POST /v2/change got no complete answer within 0.3 s (timeout-seconds) after 2 attempts. ' +
        'The service is unavailable or too slow: try again later, or raise timeout-seconds.'
    )
    expect(logs).toEqual([
      'POST /v2/change: no complete answer within 0.3 s; retry 1 of 1 in 0.1 s'
    ])
  })

  it('bounds an attempt against a server that trickles its body', async () => {
    service.handle = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.write('[')
      const timer = setInterval(() => res.write(' '), 50)
      res.on('close', () => clearInterval(timer))
    }
    const started = Date.now()
    const error = await sendError(makeTransport({ timeoutMs: 300, maxAttempts: 1 }), createChange)

    expect(Date.now() - started).toBeLessThan(1500)
    expect(service.requests).toHaveLength(1)
    expect(error.kind).toBe('outage')
    expect(error.attempts).toBe(1)
    expect(error.message).not.toContain('attempts')
  })

  it('stops reading a response at the size cap and keeps what came', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a')
    const limit = 200 * 1024 * 1024
    service.handle = (_req, res) => {
      let sent = 0
      res.writeHead(200, { 'Content-Type': 'text/plain' })
      const pump = (): void => {
        while (sent < limit) {
          sent += chunk.byteLength
          if (!res.write(chunk)) {
            res.once('drain', pump)
            return
          }
        }
        res.end()
      }
      res.on('close', () => (sent = limit))
      pump()
    }
    const response = await makeTransport({ maxResponseBytes: 100_000 }).send(hello)

    expect(response.status).toBe(200)
    expect(response.body).toHaveLength(100_000)
    expect(response.body).toMatch(/^a+$/)
  })
})

describe('Transport.send: refusals are not retried', () => {
  it.each([
    [400, /Check the values sent/],
    [401, /rejected the API key: check the api-key input and the key's permissions/],
    [403, /rejected the API key/],
    [404, /Check base-url .* and any id in the request/],
    [413, /too large/],
    [422, /Check the values sent/]
  ])('HTTP %i: one request, kind rejected, with advice', async (status, advice) => {
    service.handle = respond(status, '{"message":"nope"}')
    const error = await sendError(makeTransport({ maxAttempts: 3 }), createChange)

    expect(service.requests).toHaveLength(1)
    expect(delays).toEqual([])
    expect(error.kind).toBe('rejected')
    expect(error.status).toBe(status)
    expect(error.attempts).toBe(1)
    expect(error.message).toMatch(new RegExp(`^POST /v2/change was rejected with HTTP ${status} `))
    expect(error.message).toContain(': nope. ')
    expect(error.message).toMatch(advice)
  })

  it("appends the request's hint for the status", async () => {
    service.handle = respond(404, '<html><body><h1>Not Found</h1></body></html>', {
      'Content-Type': 'text/html'
    })
    const error = await sendError(makeTransport(), {
      method: 'GET',
      path: 'v2/change/abc',
      hints: { 404: 'No change has that id: check the change-id input.' }
    })
    expect(error.serviceMessage).toBe('Not Found')
    expect(error.message).toBe(
      'GET /v2/change/abc was rejected with HTTP 404 Not Found: Not Found. ' +
        "Check base-url (it must be the service's root) and any id in the request. " +
        'No change has that id: check the change-id input.'
    )
  })

  it('does not follow a redirect to another origin, and names the Location without the key', async () => {
    const other = await startServer({ key: certificate.key, cert: certificate.cert })
    try {
      const location = `${other.origin}/v2/hello?key=${encodeURIComponent(API_KEY)}`
      service.handle = respond(301, '', { Location: location })
      const error = await sendError(makeTransport({ maxAttempts: 3 }), hello)

      expect(service.requests).toHaveLength(1)
      expect(other.connections).toBe(0)
      expect(other.requests).toHaveLength(0)
      expect(error.kind).toBe('protocol')
      expect(error.status).toBe(301)
      expect(error.message).toContain(
        `GET /v2/hello was answered with HTTP 301 Moved Permanently, a redirect to ${other.origin}/v2/hello?key=***.`
      )
      expect(error.message).toMatch(/does not follow redirects/)
      expect(error.message).toMatch(/set base-url to it/)
      expect(error.message).not.toContain(API_KEY)
      expect(error.message).not.toContain(encodeURIComponent(API_KEY))
      expect(error.serviceMessage).not.toContain(encodeURIComponent(API_KEY))
    } finally {
      await other.close()
    }
  })

  it('redacts a key the service echoes in an error body, from message, serviceMessage and stack', async () => {
    service.handle = respond(401, JSON.stringify({ message: `invalid key ${API_KEY}` }))
    const error = await sendError(makeTransport(), hello)

    expect(error.serviceMessage).toBe('invalid key ***')
    expect(error.message).toContain('invalid key ***')
    for (const text of [error.message, error.serviceMessage ?? '', error.stack ?? '']) {
      expect(text).not.toContain(API_KEY)
    }
  })

  it('redacts a key echoed in a retried 5XX body from the log lines too', async () => {
    service.handle = respond(502, `<html><body>upstream refused ${API_KEY}</body></html>`, {
      'Content-Type': 'text/html'
    })
    const error = await sendError(makeTransport({ maxAttempts: 2 }), hello)
    expect(error.serviceMessage).toBe('upstream refused ***')
    expect([error.message, ...logs].join('\n')).not.toContain(API_KEY)
  })

  it('does not retry a certificate this process does not trust: protocol, with a NODE_EXTRA_CA_CERTS hint', async () => {
    const untrusted = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
      keySize: 2048,
      algorithm: 'sha256'
    })
    const stranger = await startServer({ key: untrusted.private, cert: untrusted.cert })
    try {
      const error = await sendError(
        makeTransport({ baseUrl: new URL(`${stranger.origin}/`), maxAttempts: 3 }),
        hello
      )
      expect(stranger.connections).toBe(1)
      expect(stranger.requests).toHaveLength(0)
      expect(delays).toEqual([])
      expect(error.kind).toBe('protocol')
      expect(error.message).toMatch(
        new RegExp(
          `the TLS certificate of 127\\.0\\.0\\.1:${stranger.port} is not trusted \\([A-Z_]+:`
        )
      )
      expect(error.message).toContain('NODE_EXTRA_CA_CERTS')
    } finally {
      await stranger.close()
    }
  })
})

describe('Transport.send through a proxy', () => {
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

  afterEach(() => {
    clearProxyEnv()
  })

  it('tunnels through HTTPS_PROXY to a host only the proxy can reach', async () => {
    process.env['HTTPS_PROXY'] = proxy.url
    const transport = makeTransport({
      baseUrl: new URL(`https://${TEST_SERVICE_HOST}:${service.port}/`)
    })
    const response = await transport.send(createChange)

    expect(response.status).toBe(200)
    expect(proxy.connects).toEqual([`${TEST_SERVICE_HOST}:${service.port}`])
    expect(service.requests).toHaveLength(1)
    expect(service.requests[0].headers['host']).toBe(`${TEST_SERVICE_HOST}:${service.port}`)
    expect(service.requests[0].headers[API_KEY_HEADER.toLowerCase()]).toBe(API_KEY)
  })

  it('passes proxy credentials from the proxy URL, and never prints the password', async () => {
    process.env['https_proxy'] = `http://robot:p%40ss@127.0.0.1:${proxy.port}`
    service.handle = respond(400, '{"message":"proxy password was p@ss"}')
    const transport = makeTransport({
      baseUrl: new URL(`https://${TEST_SERVICE_HOST}:${service.port}/`)
    })
    const error = await sendError(transport, hello)

    expect(proxy.proxyAuthorizations).toEqual([
      `Basic ${Buffer.from('robot:p@ss').toString('base64')}`
    ])
    expect(error.message).not.toContain('p@ss')
  })

  it('bypasses the proxy for NO_PROXY hosts: the name does not resolve without it', async () => {
    process.env['HTTPS_PROXY'] = proxy.url
    process.env['NO_PROXY'] = TEST_SERVICE_HOST
    const error = await sendError(
      makeTransport({
        baseUrl: new URL(`https://${TEST_SERVICE_HOST}:${service.port}/`),
        maxAttempts: 1
      }),
      hello
    )

    expect(proxy.connects).toEqual([])
    expect(service.requests).toHaveLength(0)
    expect(error.kind).toBe('outage')
    expect(error.message).toContain(`could not reach ${TEST_SERVICE_HOST}:${service.port}`)
    expect(error.message).toMatch(/ENOTFOUND|EAI_AGAIN/)
  })

  it('always reaches loopback directly', async () => {
    process.env['HTTPS_PROXY'] = proxy.url
    await makeTransport().send(hello)
    expect(proxy.connects).toEqual([])
    expect(service.requests).toHaveLength(1)
  })
})

describe('retryDelayMs', () => {
  const policy = (random: () => number): RetryDelayPolicy => ({
    backoffBaseMs: 500,
    backoffMaxMs: 8000,
    retryAfterMaxMs: 30_000,
    random
  })
  const now = Date.parse('2025-01-01T00:00:00Z')

  it('grows exponentially up to the cap, as the upper bound of the jitter', () => {
    const nearlyOne = policy(() => 0.999999)
    const ceilings = [1, 2, 3, 4, 5, 6, 7].map(attempt =>
      retryDelayMs(attempt, undefined, now, nearlyOne)
    )
    expect(ceilings).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000])
  })

  it('jitters across the whole range from 0 to the ceiling', () => {
    expect(
      retryDelayMs(
        3,
        undefined,
        now,
        policy(() => 0)
      )
    ).toBe(0)
    expect(
      retryDelayMs(
        3,
        undefined,
        now,
        policy(() => 0.25)
      )
    ).toBe(500)
    for (let i = 0; i < 200; i++) {
      const delay = retryDelayMs(4, undefined, now, policy(Math.random))
      expect(delay).toBeGreaterThanOrEqual(0)
      expect(delay).toBeLessThanOrEqual(4000)
    }
  })

  it('uses Retry-After instead of the jitter, capped, never negative', () => {
    const jitter = policy(() => 0.5)
    expect(retryDelayMs(1, '3', now, jitter)).toBe(3000)
    expect(retryDelayMs(1, ' 0 ', now, jitter)).toBe(0)
    expect(retryDelayMs(1, '86400', now, jitter)).toBe(30_000)
    expect(retryDelayMs(1, 'Wed, 01 Jan 2025 00:00:12 GMT', now, jitter)).toBe(12_000)
    expect(retryDelayMs(1, 'Tue, 31 Dec 2024 23:00:00 GMT', now, jitter)).toBe(0)
  })

  it('falls back to the jittered backoff for an invalid Retry-After', () => {
    const jitter = policy(() => 0.5)
    for (const invalid of ['', 'soon', '1.5', '-3', '5s', 'Someday, never']) {
      expect(retryDelayMs(2, invalid, now, jitter)).toBe(500)
    }
    expect(parseRetryAfterMs('later', now)).toBeUndefined()
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined()
  })
})

describe('service messages and excerpts', () => {
  const redactor = new Redactor()
  redactor.add(API_KEY)

  it.each([
    ['{"message":"bad description"}', 'bad description'],
    [
      '{"error":"invalid_request","error_description":"created_at is in the future"}',
      'created_at is in the future'
    ],
    ['{"error":{"message":"nested reason"}}', 'nested reason'],
    ['{"detail":"  spread\\n over\\n lines "}', 'spread over lines'],
    ['{"errors":[{"field":"labels"}]}', '[{"field":"labels"}]'],
    ['"just a string"', 'just a string'],
    ['{"unrelated":true}', '{"unrelated":true}'],
    ['Service Unavailable', 'Service Unavailable'],
    ['', '(empty body)']
  ])('reads %j as %j', (body, expected) => {
    expect(extractServiceMessage(body, redactor)).toBe(expected)
  })

  it('redacts before shortening, so no part of a key survives a cut', () => {
    const body = `${'x'.repeat(190)} ${API_KEY}`
    const excerpt = extractServiceMessage(body, redactor)
    expect(excerpt).toBe(`${'x'.repeat(190)} ***`)
  })

  it('bodyExcerpt makes one line of at most 200 characters, without HTML tags', () => {
    expect(bodyExcerpt('  \n\t ')).toBe('(empty body)')
    expect(bodyExcerpt('line one\n\n  line two')).toBe('line one line two')
    expect(
      bodyExcerpt(
        '<!DOCTYPE html><html><head><style>p{}</style><title>502</title></head><body><p>Bad&nbsp;gateway &amp; more</p></body></html>'
      )
    ).toBe('502 Bad gateway & more')
    expect(bodyExcerpt('a < b and c > d')).toBe('a < b and c > d')
    const long = bodyExcerpt('y'.repeat(5000))
    expect(long).toHaveLength(200)
    expect(long.endsWith('…')).toBe(true)
  })

  it('unexpectedResponse names the call, the status, what was expected and what came', () => {
    const error = unexpectedResponse(
      createChange,
      { status: 200, headers: {}, body: `<html><body>Welcome ${API_KEY}</body></html>` },
      '{"id": "<string>"}',
      redactor
    )
    expect(error).toBeInstanceOf(ServiceError)
    expect(error.kind).toBe('protocol')
    expect(error.status).toBe(200)
    expect(error.call).toBe('POST /v2/change')
    expect(error.serviceMessage).toBe('Welcome ***')
    expect(error.message).toBe(
      'POST /v2/change answered HTTP 200 OK, but not with the documented answer (expected {"id": "<string>"}); ' +
        "it sent: Welcome ***. Check that base-url points at the service's root."
    )
  })
})
