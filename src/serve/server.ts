/**
 * The receiver's HTTP side: Argo CD's and Flux's notifications, each answered 202 only once what
 * it records is synced in the state folder; liveness, readiness and Prometheus metrics. Nothing of
 * a request is echoed back; each is a line of the log, as text or JSON, cut, redacted and inert.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { errorMessage } from '../errors.ts'
import { parseJsonSafely } from '../helpers/json.ts'
import { inert, plural, truncateText } from '../helpers/text.ts'
import type { Redactor } from '../redact.ts'
import { safeLine } from '../report.ts'
import { expire, receive } from './deploys.ts'
import { readNotification, type Controller, type Notification } from './notifications.ts'
import { FullError, type Apply, type StateFolder } from './state.ts'

export const MAX_BODY_BYTES = 1024 * 1024
const REQUEST_TIMEOUT_MS = 30_000
const HEADERS_TIMEOUT_MS = 10_000
/** Each connection may hold up to MAX_BODY_BYTES. */
const MAX_CONNECTIONS = 64
/** A JSON line's message and each field are cut to these, so that the line stays whole. */
const JSON_MESSAGE_CHARS = 800
const JSON_FIELD_CHARS = 200
const MAX_ANSWER_CHARS = 300
const FLUX_SIGNATURE = /^sha256=([0-9a-f]{64})$/i
const UNAUTHORIZED: Record<Controller, string> = {
  argocd: 'the Authorization header is not "Bearer " and the webhook secret',
  flux: 'the X-Signature header is not sha256= and the HMAC of the body with the webhook secret'
}

/** What the state folder applies to the deploy memory: a notification, or the waits looked at. */
export const applyInput: Apply = (memory, input, now) => {
  const { notification } = input as { notification?: Notification }
  return notification ? receive(memory, notification, now) : expire(memory, now)
}

type Fields = Record<string, string | number | undefined>
export type Log = (level: 'info' | 'warn' | 'error', message: string, fields?: Fields) => void

/** Log lines as text ("warn: …") or JSON, each through safeLine; a JSON line's values cut first. */
export function logWriter(
  format: 'text' | 'json',
  redactor: Redactor,
  write: (line: string) => void,
  clock: () => number = Date.now
): Log {
  const cut = (text: string, max: number) => truncateText(inert(redactor.excerpt(text, max)), max)
  return (level, message, fields = {}) => {
    if (format === 'text') {
      return write(safeLine(redactor, message, { prefix: level === 'info' ? '' : `${level}: ` }))
    }
    const line: Fields = { time: new Date(clock()).toISOString(), level }
    line.message = cut(message, JSON_MESSAGE_CHARS)
    for (const [key, value] of Object.entries(fields)) {
      line[key] = typeof value === 'string' ? cut(value, JSON_FIELD_CHARS) : value
    }
    write(safeLine(redactor, JSON.stringify(line)))
  }
}

export class Metrics {
  readonly received = { argocd: 0, flux: 0 }
  readonly rejected = { unauthorized: 0, too_large: 0, invalid: 0, unavailable: 0 }
  recorded = 0
  readonly dropped = { refused: 0, expired: 0 }

  /** Prometheus's text format (0.0.4). */
  render(waiting: number, oldestAgeSeconds: number): string {
    // prettier-ignore
    const families: Array<[string, 'counter' | 'gauge', string, string, number | Record<string, number>]> = [
      ['notifications_received_total', 'counter', 'Notifications received.', 'controller', this.received],
      ['notifications_rejected_total', 'counter', 'Notifications refused.', 'reason', this.rejected],
      ['changes_recorded_total', 'counter', 'Changes the service recorded.', '', this.recorded],
      ['changes_dropped_total', 'counter', 'Changes dropped.', 'reason', this.dropped],
      ['changes_waiting', 'gauge', 'Changes accepted, not yet recorded.', '', waiting],
      ['oldest_waiting_change_age_seconds', 'gauge', 'How long the oldest waiting change has waited.', '', oldestAgeSeconds]
    ]
    return families
      .flatMap(([name, type, help, label, value]) => [
        `# HELP change_tracking_${name} ${help}`,
        `# TYPE change_tracking_${name} ${type}`,
        ...(typeof value === 'number'
          ? [`change_tracking_${name} ${value}`]
          : Object.entries(value).map(
              ([key, count]) => `change_tracking_${name}{${label}="${key}"} ${count}`
            ))
      ])
      .map(line => `${line}\n`)
      .join('')
  }
}

export interface Receiver {
  /** Argo CD's bearer token, Flux's HMAC key. */
  secret: string
  state: StateFolder
  metrics: Metrics
  log: Log
  clock: () => number
}

type Handler = (request: IncomingMessage, response: ServerResponse) => Promise<void> | void

export function createReceiverServer(receiver: Receiver): Server {
  const { state, metrics, log } = receiver
  const bearer = digest(`Bearer ${receiver.secret}`)
  const routes: Record<string, Partial<Record<string, Handler>>> = {
    '/livez': { GET: (_, response) => answer(response, 200, 'live') },
    '/healthz': {
      GET: async (_, response) => {
        if (await state.writable()) answer(response, 200, 'ready')
        else answer(response, 503, 'the state folder cannot be written')
      }
    },
    '/metrics': {
      GET: (_, response) => {
        const now = receiver.clock()
        const age = Math.max(0, Math.round((now - (state.next()?.acceptedAt ?? now)) / 1000))
        response.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' })
        response.end(metrics.render(state.waitingCount, age))
      }
    },
    '/argocd': {
      POST: (request, response) =>
        notification('argocd', request, response, () =>
          timingSafeEqual(digest(request.headers.authorization ?? ''), bearer)
        )
    },
    '/flux': {
      POST: (request, response) =>
        notification('flux', request, response, body => {
          const [, hex] = FLUX_SIGNATURE.exec(String(request.headers['x-signature'])) ?? []
          if (hex === undefined || body === undefined) return hex !== undefined
          const expected = createHmac('sha256', receiver.secret).update(body).digest()
          return timingSafeEqual(Buffer.from(hex, 'hex'), expected)
        })
    }
  }

  /** Authenticated by its headers, read within the bound, authenticated by its body, read, kept. */
  async function notification(
    controller: Controller,
    request: IncomingMessage,
    response: ServerResponse,
    authentic: (body?: Buffer) => boolean
  ): Promise<void> {
    metrics.received[controller]++
    const refuse = (status: number, reason: keyof Metrics['rejected'], why: string): void => {
      metrics.rejected[reason]++
      const fields = { controller, status }
      log('warn', `Refused a ${controller} notification with ${status}: ${why}.`, fields)
      answer(response, status, why, true)
    }
    if (!authentic()) return refuse(401, 'unauthorized', UNAUTHORIZED[controller])
    const body = await readBody(request)
    if (body === undefined)
      return refuse(413, 'too_large', `the body is over ${MAX_BODY_BYTES} bytes`)
    if (!authentic(body)) return refuse(401, 'unauthorized', UNAUTHORIZED[controller])
    const json = parseJsonSafely(body)
    if (json === undefined) return refuse(400, 'invalid', 'the body is not JSON')
    const read = readNotification(controller, json)
    if ('invalid' in read) return refuse(400, 'invalid', read.invalid)
    if ('ignored' in read) {
      log('info', `A ${controller} notification records nothing: ${read.ignored}.`, { controller })
      return answer(response, 202, 'nothing to record')
    }
    let kept: unknown[]
    try {
      kept = await state.update({ notification: read.notification }, receiver.clock())
    } catch (error) {
      if (error instanceof FullError) return refuse(503, 'unavailable', error.message.slice(0, -1))
      log('error', `The state folder cannot be written: ${errorMessage(error)}`)
      return refuse(503, 'unavailable', 'the state folder cannot be written')
    }
    const { object, deployKey: deploy, status } = read.notification
    const fields = { controller, object, deploy, status, changes: kept.length }
    const changes = plural(kept.length, 'change')
    const said = `${controller} ${object}: ${status} (deploy ${deploy}); ${changes} to record.`
    log('info', said, fields)
    answer(response, 202, 'accepted')
  }

  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0]
    const methods = Object.hasOwn(routes, path) ? routes[path] : undefined
    const handle = methods?.[request.method ?? '']
    if (handle) {
      Promise.resolve(handle(request, response)).catch((error: unknown) => {
        log('error', `${request.method} ${path} failed: ${errorMessage(error)}`)
        if (!response.headersSent) answer(response, 500, 'internal error', true)
      })
    } else if (methods) {
      response.setHeader('Allow', Object.keys(methods).join(', '))
      answer(response, 405, 'method not allowed', true)
    } else {
      answer(response, 404, 'not found', true)
    }
  })
  server.requestTimeout = REQUEST_TIMEOUT_MS
  server.headersTimeout = HEADERS_TIMEOUT_MS
  server.maxConnections = MAX_CONNECTIONS
  return server
}

/** A fixed-length digest: comparing two takes the same time whatever they hold. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

/** The body, or undefined past MAX_BODY_BYTES: nothing more is kept. */
function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES)
    return Promise.resolve(undefined)
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const take = (chunk: Buffer): void => {
      size += chunk.byteLength
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk)
      request.off('data', take)
      resolve(undefined)
    }
    request.on('data', take)
    request.on('end', () => resolve(Buffer.concat(chunks)))
    request.on('error', reject)
    request.on('close', () => reject(new Error('the client closed the connection first')))
  })
}

/** A refusal closes the connection, discarding what still comes: the client reads it, not a reset. */
function answer(response: ServerResponse, status: number, text: string, close = false): void {
  if (close) response.req.resume()
  response.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    ...(close && { Connection: 'close' })
  })
  response.end(`${inert(truncateText(text, MAX_ANSWER_CHARS))}\n`)
}
