/**
 * The service's interface: one method per endpoint, typed requests and responses.
 * HTTPS, retries, timeouts and error wording belong to the transport underneath.
 */
import type { ChangeRequest } from '../change.ts'
import type { Redactor } from '../redact.ts'
import {
  unexpectedResponse,
  type ServiceRequest,
  type ServiceResponse,
  type Transport
} from './transport.ts'

// Limits from the service interface. "1 MB" is read as the safe decimal bound.
export const MAX_EVENTS_PER_REQUEST = 1000
export const MAX_REQUEST_BYTES = 1_000_000
export const MAX_EVENT_IDS_PER_REQUEST = 1000

/** A change as the service returns it (the fields of the interface's change table). */
export type ChangeRecord = Record<string, unknown>

/** Where a dry run prints the requests it would have sent. */
export type DryRunPrinter = (request: ServiceRequest, url: URL) => void

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
    path: `v2/change/${encodeURIComponent(changeId)}`,
    hints: { 404: 'No change has that id: check the change-id input.' }
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
    path: `v1/heartbeat/${encodeURIComponent(heartbeatId)}`,
    hints: {
      404: 'No heartbeat monitor has that id: check the heartbeat-id input against the monitor page.'
    }
  }),
  hello: (): ServiceRequest => ({ method: 'GET', path: 'v2/hello' })
}

export class ServiceClient {
  private readonly transport: Transport
  private readonly redactor: Redactor
  private readonly dryRun?: DryRunPrinter

  /** With a dry-run printer, requests are printed instead of sent, and each method returns undefined. */
  constructor(transport: Transport, redactor: Redactor, dryRun?: DryRunPrinter) {
    this.transport = transport
    this.redactor = redactor
    this.dryRun = dryRun
  }

  /** POST /v2/change: the id of the new change. */
  async createChange(change: ChangeRequest): Promise<string | undefined> {
    return this.call(serviceRequests.createChange(change), readId)
  }

  /** GET /v2/change/<id>: the change object. */
  async getChange(changeId: string): Promise<ChangeRecord | undefined> {
    return this.call(serviceRequests.getChange(changeId), readObject)
  }

  /** POST /v2/stream with an NDJSON body of `count` events: their ids, in order. */
  async sendEvents(ndjson: string | Uint8Array, count: number): Promise<string[] | undefined> {
    return this.call(serviceRequests.sendEvents(ndjson), body => readIds(body, count))
  }

  /** GET /v2/event_results for at most MAX_EVENT_IDS_PER_REQUEST ids: the parsed body, as is. */
  async getEventResults(eventIds: readonly string[]): Promise<unknown> {
    return this.call(serviceRequests.getEventResults(eventIds), readAnyJson)
  }

  /** POST /v1/heartbeat/<id>: the id of the received signal. */
  async sendHeartbeat(heartbeatId: string): Promise<string | undefined> {
    return this.call(serviceRequests.sendHeartbeat(heartbeatId), readId)
  }

  /** GET /v2/hello: resolves when the service answers "OK" (plain text or a JSON string). */
  async hello(): Promise<'OK' | undefined> {
    return this.call(serviceRequests.hello(), readOk)
  }

  /**
   * Sends one request and reads its answer. A reader returns undefined when the body is not the
   * documented shape, which becomes an error naming the call and what came instead.
   */
  private async call<T>(
    request: ServiceRequest,
    read: (body: string) => { value: T } | { expected: string }
  ): Promise<T | undefined> {
    if (this.dryRun) {
      this.dryRun(request, this.transport.url(request))
      return undefined
    }
    const response: ServiceResponse = await this.transport.send(request)
    const result = read(response.body)
    if ('value' in result) return result.value
    throw unexpectedResponse(request, response, result.expected, this.redactor)
  }
}

type Read<T> = { value: T } | { expected: string }

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}

function readId(body: string): Read<string> {
  const parsed = parseJson(body)
  const id = isObject(parsed) ? parsed['id'] : undefined
  return typeof id === 'string' && id !== '' ? { value: id } : { expected: '{"id": "<string>"}' }
}

function readObject(body: string): Read<ChangeRecord> {
  const parsed = parseJson(body)
  return isObject(parsed) ? { value: parsed } : { expected: 'a JSON object (the change)' }
}

function readIds(body: string, count: number): Read<string[]> {
  const parsed = parseJson(body)
  const ok =
    Array.isArray(parsed) &&
    parsed.length === count &&
    parsed.every(id => typeof id === 'string' && id !== '')
  return ok
    ? { value: parsed as string[] }
    : { expected: `a JSON array of ${count} event id strings` }
}

/** The results' shape is not documented: any JSON is kept; an empty body is null; text stays text. */
function readAnyJson(body: string): Read<unknown> {
  if (body.trim() === '') return { value: null }
  const parsed = parseJson(body)
  return { value: parsed === undefined ? body : parsed }
}

function readOk(body: string): Read<'OK'> {
  const text = body.trim()
  return text === 'OK' || parseJson(text) === 'OK'
    ? { value: 'OK' }
    : { expected: '"OK" (as plain text or a JSON string)' }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
