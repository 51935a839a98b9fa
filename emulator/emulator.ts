/**
 * An HTTPS emulator of the whole service interface (/work/shared/service-interface.md), for tests,
 * the demo, the benchmark and end-to-end workflows (emulator/cli.ts runs it on its own).
 *
 * It stands for the service, so it imports nothing from the action's sources: the limits and the
 * key header below are the interface's own. It is strict where the interface is: a request the
 * real service could refuse is refused here, with a status and a JSON `{"error": ...}` body that
 * says why. Where the interface does not say (status codes of errors, the result shape), it picks
 * one plausible answer and sticks to it. Faults (emulator/faults.ts) can be queued per route.
 */
import { isUtf8 } from 'node:buffer'
import { randomUUID } from 'node:crypto'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import { createServer, type Server } from 'node:https'
import type { AddressInfo, Socket } from 'node:net'
import {
  answerFault,
  FaultQueue,
  isJson,
  parseRoute,
  routeMatches,
  segmentsMatch,
  send
} from './faults.ts'
import type { Fault, Reply } from './faults.ts'
import { testCertificate, type TestCertificate } from './tls.ts'

export type { Fault } from './faults.ts'

/** The interface's authentication header. */
export const API_KEY_HEADER = 'X-Service-ApiKey'
/** The interface's limit on events per POST /v2/stream. */
export const MAX_EVENTS_PER_REQUEST = 1000
/** The interface's limit on a POST /v2/stream body, uncompressed (1 MB, read as 1,000,000 bytes). */
export const MAX_REQUEST_BYTES = 1_000_000
/** The interface's limit on event ids per GET /v2/event_results. */
export const MAX_EVENT_IDS_PER_REQUEST = 1000

export interface RecordedRequest {
  method: string
  /** The path as received, still percent-encoded, without the query. */
  rawPath: string
  /** The raw query string without '?'; '' when there is none. */
  query: string
  headers: IncomingHttpHeaders
  /** The raw UTF-8 body; '' when the body was over the size limit. */
  body: string
  /** The body's size in bytes, as received (also for bodies over the limit). */
  bodyBytes: number
}

export interface EmulatorOptions {
  /** The key the service accepts. Default 'test-api-key'. */
  apiKey?: string
  /** The address to listen on. Default 127.0.0.1. */
  host?: string
  /** Default 0: any free port. */
  port?: number
  /** Default testCertificate(). */
  cert?: TestCertificate
  /** Answer GET /v2/hello with the JSON string "OK" instead of text/plain OK. */
  helloAsJson?: boolean
  /** Called once per request as it ends: "POST /v2/change 201" (the status, or "no answer"). */
  log?: (line: string) => void
}

/** A stored change: every field of the interface's change table. */
export interface StoredChange {
  id: string
  service: string
  version: string
  user: string
  comment: string
  team: string
  labels: string
  custom_metadata: string
  created_at: number
  environment: string
  description: string
}

export interface StoredEvent {
  name: string
  data: unknown
}

export const DEFAULT_API_KEY = 'test-api-key'

/**
 * Request lines with 1000 event ids are long (1000 UUIDs are ~37 KB): Node's default 16 KB header
 * limit would refuse them with 431.
 */
const MAX_HEADER_BYTES = 256 * 1024
/**
 * After a body passes MAX_REQUEST_BYTES the rest is read and dropped, so that the client gets the
 * 413 instead of a reset; past this much more the connection is cut.
 */
const MAX_DISCARDED_BYTES = 16 * 1024 * 1024

const CHANGE_STRING_FIELDS = [
  'environment',
  'service',
  'version',
  'user',
  'comment',
  'team',
  'labels',
  'custom_metadata'
] as const
const CHANGE_FIELDS: ReadonlySet<string> = new Set([
  'description',
  ...CHANGE_STRING_FIELDS,
  'created_at'
])
const EVENT_FIELDS: ReadonlySet<string> = new Set(['id', 'name', 'data'])

/** A request whose body has been read. */
interface ReadRequest {
  record: RecordedRequest
  /** undefined when it was over MAX_REQUEST_BYTES. */
  body: Buffer | undefined
  text: string | undefined
}

type Handler = (request: ReadRequest, pathParameter: string) => Reply

interface Route {
  method: string
  /** The path's segments after the leading '/'; '*' is the one path parameter. */
  segments: string[]
  handle: Handler
}

export class Emulator {
  readonly apiKey: string
  /** Every request, in arrival order, including rejected ones. */
  readonly requests: RecordedRequest[] = []
  readonly changes = new Map<string, StoredChange>()
  /** Events by id, in first-arrival order; an id sent again (a retried batch) is stored once. */
  readonly events = new Map<string, StoredEvent>()
  /** Monitor id → ids of the signals it received. */
  readonly heartbeats = new Map<string, string[]>()

  private readonly server: Server
  private readonly options: EmulatorOptions
  private readonly routes: Route[]
  private readonly sockets = new Set<Socket>()
  private readonly faults = new FaultQueue()

  private constructor(server: Server, options: EmulatorOptions) {
    this.server = server
    this.options = options
    this.apiKey = options.apiKey ?? DEFAULT_API_KEY
    this.routes = [
      { method: 'POST', segments: ['v2', 'change'], handle: r => this.createChange(r) },
      { method: 'GET', segments: ['v2', 'change', '*'], handle: (r, id) => this.getChange(r, id) },
      { method: 'POST', segments: ['v2', 'stream'], handle: r => this.ingestEvents(r) },
      { method: 'GET', segments: ['v2', 'event_results'], handle: r => this.eventResults(r) },
      { method: 'POST', segments: ['v1', 'heartbeat', '*'], handle: (_, id) => this.heartbeat(id) },
      { method: 'GET', segments: ['v2', 'hello'], handle: () => this.hello() }
    ]
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
    })
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.receive(req, res))
  }

  static async start(options: EmulatorOptions = {}): Promise<Emulator> {
    const cert = options.cert ?? (await testCertificate())
    const server = createServer({ key: cert.key, cert: cert.cert, maxHeaderSize: MAX_HEADER_BYTES })
    const emulator = new Emulator(server, options)
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject)
        resolve()
      })
    })
    return emulator
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port
  }

  /** https://localhost:<port>/ */
  get url(): string {
    return `https://localhost:${this.port}/`
  }

  addHeartbeatMonitor(id: string): void {
    if (!this.heartbeats.has(id)) this.heartbeats.set(id, [])
  }

  /**
   * Queues a fault for a route such as 'POST /v2/change' or 'POST /v1/heartbeat/*' ('*' matches
   * one path segment, as received). Each matching request takes the next queued fault; with none
   * queued it is handled normally. `times` repeats the fault (Infinity: for good).
   */
  inject(route: string, fault: Fault, times = 1): void {
    this.faults.add(route, fault, times)
  }

  /** The recorded requests that match a route pattern (as for inject). */
  requestsTo(route: string): RecordedRequest[] {
    const pattern = parseRoute(route)
    return this.requests.filter(r => routeMatches(pattern, r.method, r.rawPath))
  }

  /** Forgets everything: stored changes, events, monitors and signals, the log and the faults. */
  reset(): void {
    this.requests.length = 0
    this.changes.clear()
    this.events.clear()
    this.heartbeats.clear()
    this.faults.clear()
  }

  /** Stops listening and destroys every open connection, hung ones included. */
  async close(): Promise<void> {
    const closed = new Promise<void>(resolve => this.server.close(() => resolve()))
    for (const socket of this.sockets) socket.destroy()
    await closed
  }

  private receive(req: IncomingMessage, res: ServerResponse): void {
    const target = req.url ?? ''
    const queryStart = target.indexOf('?')
    const record: RecordedRequest = {
      method: req.method ?? '',
      rawPath: queryStart === -1 ? target : target.slice(0, queryStart),
      query: queryStart === -1 ? '' : target.slice(queryStart + 1),
      headers: req.headers,
      body: '',
      bodyBytes: 0
    }
    this.requests.push(record)
    const { log } = this.options
    if (log) {
      res.on('close', () => {
        log(`${record.method} ${record.rawPath} ${res.headersSent ? res.statusCode : 'no answer'}`)
      })
    }
    // The fault is taken on arrival, so that faults are consumed in arrival order.
    const fault = this.faults.take(record.method, record.rawPath)
    readBody(req, (body, bytes) => {
      record.bodyBytes = bytes
      const text = body?.toString('utf8')
      if (text !== undefined) record.body = text
      if (fault) answerFault(fault, req, res, JSON.stringify({ error: 'injected fault' }))
      else send(res, this.handle({ record, body, text }))
    })
  }

  private handle(request: ReadRequest): Reply {
    const { record } = request
    const key = record.headers[API_KEY_HEADER.toLowerCase()]
    if (key !== this.apiKey) return fail(401, 'invalid API key')
    if (request.body === undefined) {
      return fail(413, `the request body is larger than ${MAX_REQUEST_BYTES} bytes`)
    }
    if (!isUtf8(request.body)) return fail(400, 'the request body is not valid UTF-8')
    const segments = record.rawPath.split('/')
    if (segments[0] !== '') return fail(400, `the request target must be a path: ${record.rawPath}`)
    segments.shift()
    const onPath = this.routes.filter(route => segmentsMatch(route.segments, segments))
    const route = onPath.find(r => r.method === record.method)
    if (route === undefined) {
      if (onPath.length === 0) {
        return fail(404, `no such endpoint: ${record.method} ${record.rawPath}`)
      }
      const allowed = onPath.map(r => r.method).join(', ')
      return fail(405, `${record.method} is not allowed on ${record.rawPath}; use ${allowed}`, {
        allow: allowed
      })
    }
    const parameterIndex = route.segments.indexOf('*')
    let parameter = ''
    if (parameterIndex !== -1) {
      const decoded = percentDecode(segments[parameterIndex])
      if (decoded === undefined) {
        return fail(
          400,
          `the path segment "${segments[parameterIndex]}" is not valid percent-encoding`
        )
      }
      parameter = decoded
    }
    return route.handle(request, parameter)
  }

  private createChange({ record, text = '' }: ReadRequest): Reply {
    const unsupported = unsupportedBody(record, ['application/json'])
    if (unsupported) return unsupported
    const parsed = parseJson(text)
    if (!parsed.ok) return fail(400, `the body is not valid JSON: ${parsed.message}`)
    const body = parsed.value
    if (!isObject(body)) return fail(400, `the body must be a JSON object, got ${typeName(body)}`)
    for (const field of Object.keys(body)) {
      if (!CHANGE_FIELDS.has(field)) {
        return fail(
          400,
          `unknown field "${field}"; the fields are ${[...CHANGE_FIELDS].join(', ')}`
        )
      }
    }
    if (typeof body.description !== 'string' || body.description.trim() === '') {
      return fail(
        400,
        `description is required: a non-empty string, got ${typeName(body.description)}`
      )
    }
    for (const field of CHANGE_STRING_FIELDS) {
      if (field in body && typeof body[field] !== 'string') {
        return fail(400, `${field} must be a string, got ${typeName(body[field])}`)
      }
    }
    if (typeof body.custom_metadata === 'string' && !isJson(body.custom_metadata)) {
      return fail(400, 'custom_metadata must be a string that holds valid JSON')
    }
    if ('created_at' in body && typeof body.created_at !== 'number') {
      return fail(
        400,
        `created_at must be a number (Unix epoch seconds), got ${typeName(body.created_at)}`
      )
    }
    const stringField = (field: (typeof CHANGE_STRING_FIELDS)[number]): string =>
      typeof body[field] === 'string' ? body[field] : ''
    const change: StoredChange = {
      id: randomUUID(),
      service: stringField('service'),
      version: stringField('version'),
      user: stringField('user'),
      comment: stringField('comment'),
      team: stringField('team'),
      labels: stringField('labels'),
      custom_metadata: stringField('custom_metadata'),
      created_at:
        typeof body.created_at === 'number' ? body.created_at : Math.floor(Date.now() / 1000),
      environment: stringField('environment'),
      description: body.description
    }
    this.changes.set(change.id, change)
    return json(201, { id: change.id })
  }

  private getChange({ record }: ReadRequest, id: string): Reply {
    if (record.query !== '') return fail(400, 'this endpoint takes no query parameters')
    const change = this.changes.get(id)
    return change ? json(200, change) : fail(404, 'change not found')
  }

  private ingestEvents({ record, text = '' }: ReadRequest): Reply {
    const unsupported = unsupportedBody(record, ['application/json', 'application/x-ndjson'])
    if (unsupported) return unsupported
    const accepted: { id: string; name: string; data: unknown }[] = []
    if (mediaType(record.headers) === 'application/json') {
      const parsed = parseJson(text)
      if (!parsed.ok) return fail(400, `the body is not valid JSON: ${parsed.message}`)
      if (Array.isArray(parsed.value)) {
        return fail(
          400,
          'a JSON array is not accepted with application/json: send one event object, or several as application/x-ndjson'
        )
      }
      const problem = eventProblem(parsed.value)
      if (problem) return fail(400, `the event ${problem}`)
      accepted.push(acceptEvent(parsed.value as EventBody))
    } else {
      const lines = text.split('\n')
      for (let index = 0; index < lines.length; index++) {
        const line = lines[index]
        if (line.trim() === '') continue
        if (accepted.length === MAX_EVENTS_PER_REQUEST) {
          return fail(413, `more than ${MAX_EVENTS_PER_REQUEST} events in one request`)
        }
        const parsed = parseJson(line)
        if (!parsed.ok) return fail(400, `line ${index + 1}: not valid JSON: ${parsed.message}`)
        const problem = eventProblem(parsed.value)
        if (problem) return fail(400, `line ${index + 1}: the event ${problem}`)
        accepted.push(acceptEvent(parsed.value as EventBody))
      }
      if (accepted.length === 0) return fail(400, 'the body holds no events')
    }
    for (const event of accepted) {
      if (!this.events.has(event.id)) {
        this.events.set(event.id, { name: event.name, data: event.data })
      }
    }
    return json(
      202,
      accepted.map(event => event.id)
    )
  }

  private eventResults({ record }: ReadRequest): Reply {
    const values = record.query
      .split('&')
      .filter(part => part === 'ids' || part.startsWith('ids='))
      .map(part => part.slice('ids='.length))
    if (values.length === 0) return fail(400, 'the ids query parameter is required')
    if (values.length > 1)
      return fail(400, 'ids is given more than once: send one comma-separated list')
    if (values[0] === '') return fail(400, 'ids is empty')
    // Commas separate ids; a comma inside an id arrives encoded (%2C), so split before decoding.
    const rawIds = values[0].split(',')
    if (rawIds.length > MAX_EVENT_IDS_PER_REQUEST) {
      return fail(
        400,
        `at most ${MAX_EVENT_IDS_PER_REQUEST} event ids per request, got ${rawIds.length}`
      )
    }
    const ids: string[] = []
    for (const [index, rawId] of rawIds.entries()) {
      // A query string is form-encoded: '+' is a space, so a literal '+' must arrive as %2B.
      const id = percentDecode(rawId.replaceAll('+', ' '))
      if (id === undefined)
        return fail(400, `event id ${index + 1} ("${rawId}") is not valid percent-encoding`)
      if (id === '') return fail(400, `event id ${index + 1} is empty`)
      ids.push(id)
    }
    return json(
      200,
      ids.map(id => {
        const event = this.events.get(id)
        return { id, found: event !== undefined, result: event ? { name: event.name } : null }
      })
    )
  }

  private heartbeat(monitorId: string): Reply {
    const signals = this.heartbeats.get(monitorId)
    if (!signals) return fail(404, `heartbeat monitor not found: ${monitorId}`)
    const id = randomUUID()
    signals.push(id)
    return json(200, { id })
  }

  private hello(): Reply {
    return this.options.helloAsJson
      ? json(200, 'OK')
      : { status: 200, body: 'OK', headers: { 'content-type': 'text/plain; charset=utf-8' } }
  }
}

interface EventBody {
  id?: string
  name: string
  data: unknown
}

function acceptEvent(event: EventBody): { id: string; name: string; data: unknown } {
  return { id: event.id ?? randomUUID(), name: event.name, data: event.data }
}

/** What is wrong with an event, or undefined when it is fine. */
function eventProblem(event: unknown): string | undefined {
  if (!isObject(event)) return `must be a JSON object, got ${typeName(event)}`
  for (const field in event) {
    if (!EVENT_FIELDS.has(field))
      return `has an unknown field "${field}"; the fields are id, name, data`
  }
  if (typeof event.name !== 'string' || event.name === '') {
    return `needs a name: a non-empty string, got ${typeName(event.name)}`
  }
  // Any JSON value, null included: the interface requires the field, not a value.
  if (!('data' in event)) return 'needs data: a JSON value (null included)'
  if ('id' in event && (typeof event.id !== 'string' || event.id === '')) {
    return `id must be a non-empty string, got ${typeName(event.id)}`
  }
  return undefined
}

/** 415 when the body's Content-Type or Content-Encoding is not one the endpoint reads. */
function unsupportedBody(record: RecordedRequest, types: string[]): Reply | undefined {
  const type = mediaType(record.headers)
  if (type === undefined || !types.includes(type)) {
    return fail(
      415,
      `Content-Type must be ${types.join(' or ')}, got ${record.headers['content-type'] ?? 'none'}`
    )
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(record.headers['content-type'] ?? '')?.[1]
  if (charset && !['utf-8', 'utf8'].includes(charset.toLowerCase())) {
    return fail(415, `the body must be UTF-8, got charset ${charset}`)
  }
  const encoding = record.headers['content-encoding']
  if (encoding && encoding.toLowerCase() !== 'identity') {
    return fail(415, `Content-Encoding ${encoding} is not supported: send the body uncompressed`)
  }
  return undefined
}

function mediaType(headers: IncomingHttpHeaders): string | undefined {
  const value = headers['content-type']
  if (!value) return undefined
  return value.split(';')[0].trim().toLowerCase()
}

/** Reads the body whole, unless it is over MAX_REQUEST_BYTES: then `body` is undefined. */
function readBody(req: IncomingMessage, done: (body: Buffer | undefined, bytes: number) => void) {
  const chunks: Buffer[] = []
  let bytes = 0
  req.on('data', (chunk: Buffer) => {
    bytes += chunk.length
    if (bytes <= MAX_REQUEST_BYTES) chunks.push(chunk)
    else if (bytes > MAX_REQUEST_BYTES + MAX_DISCARDED_BYTES) req.socket.destroy()
    else chunks.length = 0
  })
  req.on('end', () =>
    done(bytes <= MAX_REQUEST_BYTES ? Buffer.concat(chunks, bytes) : undefined, bytes)
  )
  // An aborted request needs no answer.
  req.on('error', () => undefined)
}

function json(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return {
    status,
    body: JSON.stringify(value),
    headers: { 'content-type': 'application/json', ...headers }
  }
}

function fail(status: number, message: string, headers?: Record<string, string>): Reply {
  return json(status, { error: message }, headers)
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function typeName(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string'
  return `a ${typeof value}`
}

function percentDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}
