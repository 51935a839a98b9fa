/**
 * Faults queued per route, shared by the service emulator and the fake GitHub API: routes written
 * as 'METHOD /path' ('*' matches one path segment), and the misbehaviours a test can ask for.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

export type Fault =
  /**
   * Answer this instead of the real thing. The body defaults to the server's own error body;
   * `bodyBytes` instead makes a JSON body of exactly that many bytes (an array of one long string),
   * to test a client's size cap.
   */
  | { status: number; body?: string; bodyBytes?: number; headers?: Record<string, string> }
  /** Never answer; the socket stays open until the server closes. */
  | { hang: true }
  /** Destroy the connection without answering. */
  | { reset: true }
  /** Redirect to this location (302 unless given). */
  | { redirect: string; status?: 301 | 302 | 303 | 307 | 308 }

export interface Reply {
  status: number
  body: string
  headers?: Record<string, string>
}

export interface RoutePattern {
  method: string
  segments: string[]
}

interface QueuedFault {
  pattern: RoutePattern
  fault: Fault
  remaining: number
}

/** Each matching request takes the next queued fault; with none queued it is handled normally. */
export class FaultQueue {
  private queued: QueuedFault[] = []

  /** `times` repeats the fault (Infinity: for good). */
  add(route: string, fault: Fault, times: number): void {
    if (!(times >= 1) || (!Number.isInteger(times) && times !== Infinity)) {
      throw new Error(
        `inject(${route}): times must be a positive integer or Infinity, got ${times}`
      )
    }
    if ('bodyBytes' in fault && fault.bodyBytes !== undefined && fault.bodyBytes < 4) {
      throw new Error(`inject(${route}): bodyBytes must be at least 4, got ${fault.bodyBytes}`)
    }
    this.queued.push({ pattern: parseRoute(route), fault, remaining: times })
  }

  take(method: string, path: string): Fault | undefined {
    const index = this.queued.findIndex(f => routeMatches(f.pattern, method, path))
    if (index === -1) return undefined
    const queued = this.queued[index]
    queued.remaining -= 1
    if (queued.remaining <= 0) this.queued.splice(index, 1)
    return queued.fault
  }

  clear(): void {
    this.queued = []
  }
}

/**
 * Answers with a fault. `errorBody` is the server's usual error body, for a status fault without
 * one. A hung request is left open: the server's close() destroys its socket.
 */
export function answerFault(
  fault: Fault,
  req: IncomingMessage,
  res: ServerResponse,
  errorBody: string
): void {
  if ('reset' in fault) {
    req.socket.destroy()
  } else if ('hang' in fault) {
    // Never answer.
  } else if ('redirect' in fault) {
    send(res, { status: fault.status ?? 302, body: '', headers: { location: fault.redirect } })
  } else {
    const body =
      fault.bodyBytes !== undefined
        ? `["${'x'.repeat(fault.bodyBytes - 4)}"]`
        : (fault.body ?? errorBody)
    const headers = { ...fault.headers }
    if (!Object.keys(headers).some(name => name.toLowerCase() === 'content-type')) {
      headers['content-type'] = isJson(body) ? 'application/json' : 'text/plain; charset=utf-8'
    }
    send(res, { status: fault.status, body, headers })
  }
}

export function send(res: ServerResponse, reply: Reply): void {
  if (res.destroyed || res.writableEnded) return
  const body = Buffer.from(reply.body, 'utf8')
  res.writeHead(reply.status, { 'content-length': String(body.length), ...reply.headers })
  res.end(body)
}

export function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

export function parseRoute(route: string): RoutePattern {
  const match = /^([A-Z]+) (\/\S*)$/.exec(route)
  if (!match) {
    throw new Error(`route "${route}" is not of the form "METHOD /path", e.g. "POST /v2/change"`)
  }
  return { method: match[1], segments: match[2].split('/').slice(1) }
}

export function routeMatches(pattern: RoutePattern, method: string, path: string): boolean {
  if (pattern.method !== method || !path.startsWith('/')) return false
  return segmentsMatch(pattern.segments, path.split('/').slice(1))
}

/** '*' matches one non-empty segment; anything else matches itself. */
export function segmentsMatch(pattern: string[], segments: string[]): boolean {
  return (
    pattern.length === segments.length &&
    pattern.every((part, i) => (part === '*' ? segments[i] !== '' : part === segments[i]))
  )
}
