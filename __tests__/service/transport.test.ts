/**
 * The transport against real loopback servers: what it sends, what it retries and for how long,
 * its deadlines and caps, how it words each failure, its proxy, and that no socket outlives an
 * attempt.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { generate } from 'selfsigned'
import { ServiceError } from '../../src/errors.ts'
import { Redactor } from '../../src/redact.ts'
import {
  API_KEY_HEADER,
  callName,
  Transport,
  type ServiceRequest,
  type TransportOptions
} from '../../src/service/transport.ts'
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.ts'
import {
  TEST_SERVICE_HOST,
  trustTestCertificate,
  type TestCertificate
} from '../../emulator/tls.ts'
import {
  closedPort,
  failFirst,
  okJson,
  respond,
  startServer,
  startSilentServer,
  type TestServer
} from '../service/loopback.ts'

const API_KEY = 'k3y-S3cr3t/value'
const PROXY_ENV = ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'] as const
const ACTION_ADVICE = {
  raiseTimeout: 'raise the timeout-seconds input',
  checkAddress: 'check the base-url input',
  checkApiKey: "check the api-key input and the key's permissions"
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
    advice: ACTION_ADVICE,
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
  throw new Error(`${callName(request)} succeeded but should have failed`)
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

describe('Transport construction', () => {
  it('refuses a base URL that is not https: the key is never sent in clear', () => {
    expect(() => makeTransport({ baseUrl: new URL('http://service.example/') })).toThrow(
      /only over https/
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
    const [received] = service.requests
    expect(received.body).not.toContain(token)
    expect(received.body).not.toContain(API_KEY)
    expect(received.body).not.toContain('hunter2')
    expect(JSON.parse(received.body)).toEqual({
      description: 'Fix login (token ***, key ***, https://***@git.example/x)',
      custom_metadata: JSON.stringify({
        m: 'Fix login (token ***, key ***, https://***@git.example/x)'
      })
    })
    expect(received.headers['content-length']).toBe(String(Buffer.byteLength(received.body)))
  })

  it('sends a body without secrets as it is, bytes untouched', async () => {
    const ndjson = new TextEncoder().encode('{"name":"a","data":"https://host/x"}\n')
    await makeTransport().send({ method: 'POST', path: 'v2/stream', body: ndjson })
    expect(service.requests[0].body).toBe('{"name":"a","data":"https://host/x"}\n')
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
      `GET /v2/hello could not reach https://127.0.0.1:${port} after 2 attempts`
    )
    expect(error.message).toContain('ECONNREFUSED')
    expect(error.message).toMatch(/check the base-url input, and HTTPS_PROXY \/ NO_PROXY/)
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
      'POST /v2/change got no complete answer within 0.3 s after 2 attempts. ' +
        'The service is unavailable or too slow: try again later, or raise the timeout-seconds input.'
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

  it('refuses a response over the size cap as an error naming the call and the cap, never cut data', async () => {
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
    const error = await sendError(makeTransport({ maxResponseBytes: 128 * 1024 }), hello)

    expect(service.requests).toHaveLength(1)
    expect(error.kind).toBe('protocol')
    expect(error.message).toBe(
      'GET /v2/hello answered with more than 128 KiB (the response size cap), so the answer was not used. ' +
        "Check the base-url input: it must point at the service's root."
    )
  })

  it('takes an answer of exactly the size cap', async () => {
    service.handle = respond(200, 'b'.repeat(1000))
    const response = await makeTransport({ maxResponseBytes: 1000 }).send(hello)
    expect(response.body).toBe('b'.repeat(1000))
  })
})

describe('Transport.send: refusals are not retried', () => {
  it.each([
    [400, /Check the values sent/],
    [401, /rejected the API key: check the api-key input and the key's permissions/],
    [403, /rejected the API key/],
    [404, /Check the base-url input .* and any id in the request/],
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
        "Check the base-url input (it must be the service's root) and any id in the request. " +
        'No change has that id: check the change-id input.'
    )
  })

  it('does not follow a redirect to another origin, and names its target by scheme, host and port only', async () => {
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
        `GET /v2/hello was answered with HTTP 301 Moved Permanently, a redirect to ${other.origin}.`
      )
      expect(error.message).toMatch(/does not follow redirects/)
      expect(error.message).toMatch(/check the base-url input and use that address/)
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
          `the TLS certificate of https://127\\.0\\.0\\.1:${stranger.port} is not trusted \\([A-Z_]+: [^)]+\\)\\. `
        )
      )
      expect(error.message).toContain('NODE_EXTRA_CA_CERTS')
      expect(error.message).not.toContain('--use-system-ca')
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
    expect(error.message).not.toContain('p%40ss')
  })

  it('bypasses the proxy for NO_PROXY hosts; a host that does not exist is a configuration error, not retried', async () => {
    process.env['HTTPS_PROXY'] = proxy.url
    process.env['NO_PROXY'] = TEST_SERVICE_HOST
    const error = await sendError(
      makeTransport({
        baseUrl: new URL(`https://${TEST_SERVICE_HOST}:${service.port}/`),
        maxAttempts: 3
      }),
      hello
    )

    expect(proxy.connects).toEqual([])
    expect(service.requests).toHaveLength(0)
    expect(delays).toEqual([])
    expect(error.kind).toBe('configuration')
    expect(error.attempts).toBe(1)
    expect(error.message).toBe(
      `GET /v2/hello was not sent: the host of https://${TEST_SERVICE_HOST}:${service.port} was not found (ENOTFOUND). ` +
        'Check the base-url input: the host name may be mistyped.'
    )
  })

  it('always reaches loopback directly', async () => {
    process.env['HTTPS_PROXY'] = proxy.url
    await makeTransport().send(hello)
    expect(proxy.connects).toEqual([])
    expect(service.requests).toHaveLength(1)
  })
})

describe('Transport.send: a proxy that refuses the tunnel', () => {
  afterEach(() => {
    clearProxyEnv()
  })

  it.each([
    [407, /Check the proxy user name and password in HTTPS_PROXY\.$/],
    [403, /The proxy does not allow this connection/]
  ])(
    'HTTP %i to CONNECT: a configuration error naming the proxy by host and port, not retried',
    async (status, advice) => {
      const refusing = await startConnectProxy({ refuseWith: status })
      try {
        process.env['HTTPS_PROXY'] = `http://robot:pr0xy-pw@127.0.0.1:${refusing.port}`
        const error = await sendError(
          makeTransport({
            baseUrl: new URL(`https://${TEST_SERVICE_HOST}:${service.port}/`),
            maxAttempts: 3
          }),
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
      } finally {
        await refusing.close()
      }
    }
  )

  it("retries the proxy's own trouble (502 to CONNECT) and ends as an outage", async () => {
    const failing = await startConnectProxy({ refuseWith: 502 })
    try {
      process.env['HTTPS_PROXY'] = failing.url
      const error = await sendError(
        makeTransport({
          baseUrl: new URL(`https://${TEST_SERVICE_HOST}:${service.port}/`),
          maxAttempts: 2
        }),
        hello
      )
      expect(failing.connects).toHaveLength(2)
      expect(error.kind).toBe('outage')
      expect(error.message).toContain(
        `the proxy 127.0.0.1:${failing.port} answered HTTP 502 Bad Gateway after 2 attempts`
      )
    } finally {
      await failing.close()
    }
  })
})

describe('Transport.send: a malformed answer', () => {
  const hugeHeader: Parameters<typeof failFirst>[1] = (_req, res) => {
    res.writeHead(503, { 'Content-Type': 'text/plain', 'X-Padding': 'p'.repeat(20 * 1024) })
    res.end('busy')
  }

  it('retries an oversized response header like a 5XX', async () => {
    service.handle = failFirst(1, hugeHeader)
    const response = await makeTransport({ maxAttempts: 2 }).send(hello)
    expect(response.status).toBe(200)
    expect(service.requests).toHaveLength(2)
    expect(logs[0]).toMatch(/^GET \/v2\/hello: HPE_HEADER_OVERFLOW \(.+\); retry 1 of 1/)
  })

  it('ends an oversized header that persists as an outage', async () => {
    service.handle = hugeHeader
    const error = await sendError(makeTransport({ maxAttempts: 2 }), hello)
    expect(service.requests).toHaveLength(2)
    expect(error.kind).toBe('outage')
    expect(error.message).toMatch(
      /^GET \/v2\/hello got a malformed answer from https:\/\/127\.0\.0\.1:\d+ after 2 attempts \(HPE_HEADER_OVERFLOW: /
    )
  })
})

describe('Transport.send: no socket outlives its attempt', () => {
  let silent: Awaited<ReturnType<typeof startSilentServer>>
  let proxy: ConnectProxy

  beforeAll(async () => {
    silent = await startSilentServer()
    proxy = await startConnectProxy({
      route: (host, port) =>
        host === TEST_SERVICE_HOST ? { host: '127.0.0.1', port } : { host, port }
    })
  })

  afterAll(async () => {
    await silent.close()
    await proxy.close()
  })

  afterEach(() => {
    clearProxyEnv()
  })

  it('after a success, keeping only the idle connection for the next request until close()', async () => {
    const transport = makeTransport()
    await transport.send(hello)
    await transport.send(hello)
    expect(service.connections).toBe(1)
    transport.close()
    await service.allClosed()
  })

  it('after a timeout against a service that never answers, on a kept-alive connection too', async () => {
    const transport = makeTransport({ timeoutMs: 200, maxAttempts: 1 })
    await transport.send(hello)
    service.handle = () => {}
    await sendError(transport, hello)
    expect(service.connections).toBe(1)
    await service.allClosed()
  })

  it('after a timeout against a service that never answers', async () => {
    service.handle = () => {}
    await sendError(makeTransport({ timeoutMs: 200, maxAttempts: 1 }), hello)
    expect(service.connections).toBe(1)
    await service.allClosed()
  })

  it('after an answer over the size cap', async () => {
    service.handle = respond(200, 'x'.repeat(50_000))
    await sendError(makeTransport({ maxResponseBytes: 1000 }), hello)
    await service.allClosed()
  })

  it('after a success through a proxy tunnel', async () => {
    process.env['HTTPS_PROXY'] = proxy.url
    const transport = makeTransport({
      baseUrl: new URL(`https://${TEST_SERVICE_HOST}:${service.port}/`)
    })
    await transport.send(hello)
    await transport.send(hello)
    expect(proxy.connects).toHaveLength(1)
    transport.close()
    await service.allClosed()
  })

  it('after a timeout while a proxy never answers CONNECT', async () => {
    process.env['HTTPS_PROXY'] = silent.url
    const error = await sendError(
      makeTransport({
        baseUrl: new URL(`https://${TEST_SERVICE_HOST}:${service.port}/`),
        timeoutMs: 200,
        maxAttempts: 2
      }),
      hello
    )
    expect(error.kind).toBe('outage')
    expect(silent.connections).toBe(2)
    await silent.allClosed()
  })
})

describe('Transport.send: the outage budget', () => {
  it('bounds a change and then a heartbeat against a hanging service by one budget in all', async () => {
    service.handle = () => {}
    const transport = makeTransport({
      timeoutMs: 300,
      maxAttempts: 4,
      outageBudgetMs: 600,
      minRetryAttemptMs: 50,
      sleep: undefined
    })
    const started = performance.now()
    const first = await sendError(transport, createChange)
    const second = await sendError(transport, { method: 'POST', path: 'v1/heartbeat/m1' })
    const elapsed = performance.now() - started

    expect(elapsed).toBeGreaterThanOrEqual(550)
    expect(elapsed).toBeLessThan(900)
    expect(first.kind).toBe('outage')
    expect(first.message).toContain("(what was left of this run's outage budget) after 2 attempts")
    expect(second.kind).toBe('outage')
    expect(second.attempts).toBe(0)
    expect(second.message).toBe(
      "POST /v1/heartbeat/m1 was not sent: the service was unavailable for this run's whole outage budget of 0.6 s already. Try again later."
    )
    expect(service.requests.filter(request => request.url === '/v1/heartbeat/m1')).toEqual([])
  })

  it('with the defaults, a change and a heartbeat answered 503 with Retry-After: 30 cost at most 60 s of waits', async () => {
    service.handle = respond(503, '{"message":"down"}', { 'Retry-After': '30' })
    const transport = makeTransport({
      timeoutMs: 30_000,
      maxAttempts: 4,
      outageBudgetMs: undefined,
      retryAfterMaxMs: undefined,
      backoffBaseMs: undefined,
      backoffMaxMs: undefined
    })
    const first = await sendError(transport, createChange)
    const second = await sendError(transport, { method: 'POST', path: 'v1/heartbeat/m1' })

    expect(delays).toEqual([30_000])
    expect(first.attempts).toBe(2)
    expect(first.message).toContain(
      "Retries stopped there: another would overrun this run's outage budget of 60 s."
    )
    expect(second.attempts).toBe(1)
    expect(service.requests).toHaveLength(3)
  })

  it('is never charged for healthy answers, however many or slow', async () => {
    service.handle = (req, res, index) => setTimeout(() => okJson(req, res, index), 50)
    const transport = makeTransport({ outageBudgetMs: 250, minRetryAttemptMs: 10 })
    const started = performance.now()
    for (let i = 0; i < 6; i++) await transport.send(createChange)
    expect(performance.now() - started).toBeGreaterThan(250)
    expect(service.requests).toHaveLength(6)
  })
})
