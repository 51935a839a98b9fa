/**
 * The service's interface: one method per endpoint, typed requests and responses, and the checks
 * that each answer is the documented one. HTTPS, retries, timeouts and error wording belong to
 * the transport underneath. A dry run exchanges the same requests for placeholders (DryRunClient).
 */
import { randomUUID } from 'node:crypto'
import { ServiceError } from '../errors.ts'
import { isJsonObject, parseJsonSafely } from '../helpers/json.ts'
import { endSentence, hasUnsafeCharacter, plural } from '../helpers/text.ts'
import type { ServiceRequest } from './request.ts'
import type { Transport } from './transport.ts'

// Limits from the service interface. "1 MB" is read as the safe decimal bound.
export const MAX_EVENTS_PER_REQUEST = 1000
export const MAX_REQUEST_BYTES = 1_000_000
export const MAX_EVENT_IDS_PER_REQUEST = 1000
/** The longest id taken from the service (the interface names none): ids are printed, passed on. */
export const MAX_ID_CHARS = 1024
/** The id a dry run answers for a heartbeat's signal and each event; a change gets a new UUID. */
export const DRY_RUN_ID = 'dry-run'

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

/** An answer's body as read: the documented value, or what the documented answer is. */
type Read<T> = { value: T } | { expected: string }

/** What the commands call: the service (ServiceClient), or a dry run (DryRunClient). */
export type ChangeService = ServiceEndpoints

/** Each endpoint's request, built once: a subclass sends it, or a dry run prints it. */
export abstract class ServiceEndpoints {
  protected abstract exchange<T>(
    endpoint: Endpoint,
    request: ServiceRequest,
    read: (json: unknown, body: string) => Read<T>,
    placeholder: T
  ): Promise<T>

  async createChange(change: ChangeRequest): Promise<string> {
    const request = post('v2/change', JSON.stringify(change), 'application/json')
    // A dry run's change has an id of its own, as its CDEvent needs one.
    return this.exchange('createChange', request, readId, randomUUID())
  }

  async getChange(changeId: string): Promise<ChangeRecord> {
    const path = `v2/change/${encodeURIComponent(changeId)}`
    return this.exchange('getChange', { method: 'GET', path }, readObject, { id: changeId })
  }

  /** An NDJSON body of `count` events: their ids, in order, one per event. */
  async sendEvents(ndjson: string | Uint8Array, count: number): Promise<string[]> {
    const request = post('v2/stream', ndjson, 'application/x-ndjson')
    const placeholder = new Array<string>(count).fill(DRY_RUN_ID)
    return this.exchange('sendEvents', request, json => readIds(json, count), placeholder)
  }

  /** At most MAX_EVENT_IDS_PER_REQUEST ids: the parsed body, as is. */
  async getEventResults(eventIds: readonly string[]): Promise<unknown> {
    // Each id is encoded, so a comma inside an id becomes %2C; the separators stay literal.
    const query = `ids=${eventIds.map(id => encodeURIComponent(id)).join(',')}`
    const request: ServiceRequest = { method: 'GET', path: 'v2/event_results', query }
    return this.exchange('getEventResults', request, readAnyJson, [])
  }

  async sendHeartbeat(heartbeatId: string): Promise<string> {
    const path = `v1/heartbeat/${encodeURIComponent(heartbeatId)}`
    return this.exchange('sendHeartbeat', { method: 'POST', path }, readId, DRY_RUN_ID)
  }

  async hello(): Promise<'OK'> {
    return this.exchange('hello', { method: 'GET', path: 'v2/hello' }, readOk, 'OK')
  }
}

function post(path: string, body: string | Uint8Array, contentType: string): ServiceRequest {
  return { method: 'POST', path, body, contentType }
}

/** The caller's advice per endpoint and HTTP status, added at the end of a failure's message. */
export type CallHints = Partial<Record<Endpoint, Partial<Record<number, string>>>>

export class ServiceClient extends ServiceEndpoints {
  private readonly transport: Transport
  private readonly hints: CallHints
  /** One entry per call under way. */
  private readonly underWay: Endpoint[] = []

  constructor(transport: Transport, hints: CallHints = {}) {
    super()
    this.transport = transport
    this.hints = hints
  }

  /** The calls under way, each named once, for a cancelled run to report. */
  callsInFlight(): CallInFlight[] {
    return [...new Set(this.underWay)].map(endpoint => {
      const records = RECORDS[endpoint]
      const call = ENDPOINT_CALLS[endpoint]
      return { label: records ? `${records} (${call})` : call, records: records !== undefined }
    })
  }

  /** Sends one request and reads its answer; an answer of the wrong shape names the call. */
  protected async exchange<T>(
    endpoint: Endpoint,
    request: ServiceRequest,
    read: (json: unknown, body: string) => Read<T>
  ): Promise<T> {
    this.underWay.push(endpoint)
    try {
      const response = await this.transport.send(request)
      const result = read(parseJsonSafely(response.body), response.body)
      if ('value' in result) return result.value
      throw this.transport.failureError(request, { type: 'unexpected', response, ...result })
    } catch (error) {
      const hint = error instanceof ServiceError && this.hints[endpoint]?.[error.status ?? 0]
      throw hint ? new ServiceError(`${error.message} ${endSentence(hint)}`, error) : error
    } finally {
      this.underWay.splice(this.underWay.indexOf(endpoint), 1)
    }
  }
}

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

function readId(json: unknown): Read<string> {
  const id = isJsonObject(json) ? json['id'] : undefined
  return isPrintableId(id) ? { value: id } : { expected: `{"id": ${ID_SHAPE}}` }
}

function readObject(json: unknown): Read<ChangeRecord> {
  return isJsonObject(json) ? { value: json } : { expected: 'a JSON object (the change)' }
}

/** The one check of the event ids: as many as events were sent, each fit to print. */
function readIds(json: unknown, count: number): Read<string[]> {
  return Array.isArray(json) && json.length === count && json.every(isPrintableId)
    ? { value: json }
    : { expected: `a JSON array of ${plural(count, 'event id')}, each ${ID_SHAPE}` }
}

/** The results' shape is not documented: any JSON is kept; an empty body is null; text stays text. */
function readAnyJson(json: unknown, body: string): Read<unknown> {
  if (body.trim() === '') return { value: null }
  return { value: json === undefined ? body : json }
}

function readOk(json: unknown, body: string): Read<'OK'> {
  return json === 'OK' || body.trim() === 'OK'
    ? { value: 'OK' }
    : { expected: '"OK" (as plain text or a JSON string)' }
}
