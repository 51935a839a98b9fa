/**
 * The service's interface: one method per endpoint, typed requests and responses, and the checks
 * that each answer is the documented one. HTTPS, retries, timeouts and error wording belong to
 * the transport underneath. A dry run uses DryRunClient instead, with the same interface.
 */
import { isJsonObject, parseJsonSafely } from '../json.ts'
import { hasUnsafeCharacter, plural } from '../text.ts'
import type { ServiceRequest, StatusHints } from './request.ts'
import type { Transport } from './transport.ts'

// Limits from the service interface. "1 MB" is read as the safe decimal bound.
export const MAX_EVENTS_PER_REQUEST = 1000
export const MAX_REQUEST_BYTES = 1_000_000
export const MAX_EVENT_IDS_PER_REQUEST = 1000
/**
 * The longest id (change, signal, event) taken from the service. Ids are printed and passed on
 * as outputs; the interface names no bound, and real ids (UUIDs, hashes) are far shorter.
 */
export const MAX_ID_CHARS = 1024

/** The body of POST /v2/change, as the service interface defines it. */
export interface ChangeRequest {
  description: string
  environment?: string
  service?: string
  version?: string
  user?: string
  comment?: string
  team?: string
  /** Comma-separated. */
  labels?: string
  /** A JSON document, carried as a string. */
  custom_metadata?: string
  /** Unix epoch seconds; the service uses the current time when omitted. */
  created_at?: number
}

/** A change as the service returns it (the fields of the interface's change table). */
export type ChangeRecord = Record<string, unknown>

/** Each endpoint's call as messages name it: the one spelling of these labels. */
export const ENDPOINT_CALLS = {
  createChange: 'POST /v2/change',
  getChange: 'GET /v2/change/{id}',
  sendEvents: 'POST /v2/stream',
  getEventResults: 'GET /v2/event_results',
  sendHeartbeat: 'POST /v1/heartbeat/{id}',
  hello: 'GET /v2/hello'
} as const
export type Endpoint = keyof typeof ENDPOINT_CALLS

/** What each recording call records, for a cancelled run to say what may be recorded already. */
const RECORDS: Partial<Record<Endpoint, string>> = {
  createChange: 'A change',
  sendHeartbeat: 'A heartbeat',
  sendEvents: 'A batch of events'
}

/** A call under way: "A change (POST /v2/change)", or "GET /v2/hello" for a read. */
export interface CallInFlight {
  label: string
  /** Whether the service may have recorded something already. */
  records: boolean
}

/** What the commands call: the service, or a dry run that prints each request (DryRunClient). */
export interface ChangeService {
  createChange(change: ChangeRequest): Promise<string>
  getChange(changeId: string): Promise<ChangeRecord>
  sendEvents(ndjson: string | Uint8Array, count: number): Promise<string[]>
  getEventResults(eventIds: readonly string[]): Promise<unknown>
  sendHeartbeat(heartbeatId: string): Promise<string>
  hello(): Promise<'OK'>
}

/** The request for each endpoint, built without sending anything. */
export const serviceRequests = {
  createChange: (change: ChangeRequest): ServiceRequest => ({
    method: 'POST',
    path: 'v2/change',
    body: JSON.stringify(change),
    contentType: 'application/json'
  }),
  getChange: (changeId: string): ServiceRequest => ({
    method: 'GET',
    path: `v2/change/${encodeURIComponent(changeId)}`
  }),
  sendEvents: (ndjson: string | Uint8Array): ServiceRequest => ({
    method: 'POST',
    path: 'v2/stream',
    body: ndjson,
    contentType: 'application/x-ndjson'
  }),
  getEventResults: (eventIds: readonly string[]): ServiceRequest => ({
    method: 'GET',
    path: 'v2/event_results',
    // Each id is encoded, so a comma inside an id becomes %2C; the separators stay literal.
    query: `ids=${eventIds.map(id => encodeURIComponent(id)).join(',')}`
  }),
  sendHeartbeat: (heartbeatId: string): ServiceRequest => ({
    method: 'POST',
    path: `v1/heartbeat/${encodeURIComponent(heartbeatId)}`
  }),
  hello: (): ServiceRequest => ({ method: 'GET', path: 'v2/hello' })
} satisfies Record<Endpoint, (...args: never[]) => ServiceRequest>

/**
 * The caller's advice per endpoint and status, added to the failure's message: e.g.
 * { getChange: { 404: 'No change has that id: check the change-id input.' } }.
 */
export type CallHints = Partial<Record<Endpoint, StatusHints>>

export class ServiceClient implements ChangeService {
  private readonly transport: Transport
  private readonly hints: CallHints
  /** One entry per call under way. */
  private readonly underWay: Endpoint[] = []

  constructor(transport: Transport, hints: CallHints = {}) {
    this.transport = transport
    this.hints = hints
  }

  /** POST /v2/change: the id of the new change. */
  async createChange(change: ChangeRequest): Promise<string> {
    return this.call('createChange', serviceRequests.createChange(change), readId)
  }

  /** GET /v2/change/<id>: the change object. */
  async getChange(changeId: string): Promise<ChangeRecord> {
    return this.call('getChange', serviceRequests.getChange(changeId), readObject)
  }

  /** POST /v2/stream with an NDJSON body of `count` events: their ids, in order, one per event. */
  async sendEvents(ndjson: string | Uint8Array, count: number): Promise<string[]> {
    return this.call('sendEvents', serviceRequests.sendEvents(ndjson), body => readIds(body, count))
  }

  /** GET /v2/event_results for at most MAX_EVENT_IDS_PER_REQUEST ids: the parsed body, as is. */
  async getEventResults(eventIds: readonly string[]): Promise<unknown> {
    return this.call('getEventResults', serviceRequests.getEventResults(eventIds), readAnyJson)
  }

  /** POST /v1/heartbeat/<id>: the id of the received signal. */
  async sendHeartbeat(heartbeatId: string): Promise<string> {
    return this.call('sendHeartbeat', serviceRequests.sendHeartbeat(heartbeatId), readId)
  }

  /** GET /v2/hello: resolves when the service answers "OK" (plain text or a JSON string). */
  async hello(): Promise<'OK'> {
    return this.call('hello', serviceRequests.hello(), readOk)
  }

  /** The calls under way, each named once, for a cancelled run to report. */
  callsInFlight(): CallInFlight[] {
    return [...new Set(this.underWay)].map(endpoint => {
      const records = RECORDS[endpoint]
      const call = ENDPOINT_CALLS[endpoint]
      return records
        ? { label: `${records} (${call})`, records: true }
        : { label: call, records: false }
    })
  }

  /** Sends one request and reads its answer; an answer of the wrong shape names the call. */
  private async call<T>(
    endpoint: Endpoint,
    built: ServiceRequest,
    read: (body: string) => Read<T>
  ): Promise<T> {
    const hints = this.hints[endpoint]
    const request = hints ? { ...built, hints } : built
    this.underWay.push(endpoint)
    try {
      const response = await this.transport.send(request)
      const result = read(response.body)
      if ('value' in result) return result.value
      throw this.transport.unexpectedAnswer(request, response, result.expected)
    } finally {
      this.underWay.splice(this.underWay.indexOf(endpoint), 1)
    }
  }
}

type Read<T> = { value: T } | { expected: string }

const ID_SHAPE = `a single-line printable string of 1 to ${MAX_ID_CHARS} characters`

/** An id fit to print and pass on: it can never start a line of the log or hide another. */
function isPrintableId(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.trim() !== '' &&
    value.length <= MAX_ID_CHARS &&
    !hasUnsafeCharacter(value)
  )
}

function readId(body: string): Read<string> {
  const parsed = parseJsonSafely(body)
  const id = isJsonObject(parsed) ? parsed['id'] : undefined
  return isPrintableId(id) ? { value: id } : { expected: `{"id": ${ID_SHAPE}}` }
}

function readObject(body: string): Read<ChangeRecord> {
  const parsed = parseJsonSafely(body)
  return isJsonObject(parsed) ? { value: parsed } : { expected: 'a JSON object (the change)' }
}

/** The one check of the event ids: as many as events were sent, each fit to print. */
function readIds(body: string, count: number): Read<string[]> {
  const parsed = parseJsonSafely(body)
  const ok = Array.isArray(parsed) && parsed.length === count && parsed.every(isPrintableId)
  return ok
    ? { value: parsed as string[] }
    : { expected: `a JSON array of ${plural(count, 'event id')}, each ${ID_SHAPE}` }
}

/** The results' shape is not documented: any JSON is kept; an empty body is null; text stays text. */
function readAnyJson(body: string): Read<unknown> {
  if (body.trim() === '') return { value: null }
  const parsed = parseJsonSafely(body)
  return { value: parsed === undefined ? body : parsed }
}

function readOk(body: string): Read<'OK'> {
  const text = body.trim()
  return text === 'OK' || parseJsonSafely(text) === 'OK'
    ? { value: 'OK' }
    : { expected: '"OK" (as plain text or a JSON string)' }
}
