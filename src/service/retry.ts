/**
 * The retry policy: why an attempt failed and whether another may help, how long to wait
 * (exponential backoff with full jitter, or the service's Retry-After), and the outage budget
 * that bounds what an outage costs a run.
 */
import type { ServiceResponse } from './request.ts'

/** The first backoff's ceiling; each later one doubles, up to BACKOFF_MAX_MS. */
export const BACKOFF_BASE_MS = 500
/** The largest jittered wait: a deploy should not stall on backoff alone. */
export const BACKOFF_MAX_MS = 8_000
/** A Retry-After longer than this is cut to it: the service may ask for hours. */
export const RETRY_AFTER_MAX_MS = 30_000
/**
 * What an outage may cost one run, all requests together: failed attempts and the waits between
 * them. Tracking must never hold up a deploy for long; with the defaults (30 s attempts, 4 of them)
 * a hanging service costs at most this, a change and its heartbeat included.
 */
export const OUTAGE_BUDGET_MS = 60_000
/** A retry is made only when at least this much budget would be left for its attempt. */
export const MIN_RETRY_ATTEMPT_MS = 1_000

/** Statuses that mean "try again": the service is overloaded or had a moment. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status < 600)
}

/**
 * Network error codes that mean "try again": the service or the path to it had a moment.
 * ENOTFOUND is not among them: a name that does not exist is a typo, not an outage.
 * HPE_* (a malformed or oversized response header) is retried like a 5XX: proxies and load
 * balancers in trouble send such answers.
 */
const RETRYABLE_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN'
])

export function isRetryableNetworkCode(code: string): boolean {
  return RETRYABLE_NETWORK_CODES.has(code) || code.startsWith('HPE_')
}

/** The parts of the retry policy that decide how long to wait. */
export interface RetryDelayPolicy {
  backoffBaseMs: number
  backoffMaxMs: number
  retryAfterMaxMs: number
  /** Returns a number in [0, 1). */
  random: () => number
}

/**
 * How long to wait after failed attempt number `attempt` (1-based) before the next one.
 *
 * Without Retry-After: exponential backoff with full jitter,
 * random() * min(backoffMaxMs, backoffBaseMs * 2^(attempt-1)).
 * With a valid Retry-After (delay-seconds or an HTTP-date, relative to `now`): that delay,
 * at least 0 and at most retryAfterMaxMs, instead of the jittered wait.
 */
export function retryDelayMs(
  attempt: number,
  retryAfterHeader: string | undefined,
  now: number,
  policy: RetryDelayPolicy
): number {
  const retryAfter = parseRetryAfterMs(retryAfterHeader, now)
  if (retryAfter !== undefined) return Math.min(Math.max(retryAfter, 0), policy.retryAfterMaxMs)
  const ceiling = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** (attempt - 1))
  return Math.round(policy.random() * ceiling)
}

/** A Retry-After header as milliseconds from `now`; undefined when absent or not valid. */
export function parseRetryAfterMs(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined
  const value = header.trim()
  if (value === '') return undefined
  // delay-seconds is 1*DIGIT (RFC 9110); anything else numeric-looking ("1.5", "-3") is invalid.
  if (/^\d+$/.test(value)) return Number(value) * 1000
  // An HTTP-date starts with a weekday name; Date.parse alone accepts too much ("5", "-3").
  if (!/^[A-Za-z]{3,9},? /.test(value)) return undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : date - now
}

/**
 * The time one run may still spend on an outage, shared by every request of a transport.
 * Failed attempts and retry waits are charged; a healthy answer costs nothing, however slow.
 */
export class OutageBudget {
  readonly totalMs: number
  private spentMs = 0

  constructor(totalMs: number) {
    this.totalMs = totalMs
  }

  get remainingMs(): number {
    return Math.max(0, this.totalMs - this.spentMs)
  }

  charge(ms: number): void {
    this.spentMs += Math.max(0, ms)
  }
}

/** Why one attempt (or a request before its first attempt) failed. */
export type Failure =
  | { type: 'status'; response: ServiceResponse }
  /** No complete answer within the deadline; `budgetCut` when the outage budget shortened it. */
  | { type: 'timeout'; deadlineMs: number; budgetCut: boolean }
  | { type: 'network'; code: string; message: string }
  /** The proxy did not open a tunnel; `status` is its answer to CONNECT, when it gave one. */
  | { type: 'proxy'; status?: number }
  | { type: 'too-large'; capBytes: number }
  /** Not sent: the run's outage budget was spent by earlier requests. */
  | { type: 'budget-spent' }

/** Marks an attempt that ran out of time. */
export class AttemptTimeout extends Error {
  readonly code = 'ATTEMPT_TIMEOUT'
}

/** Marks a response over the size cap. */
export class ResponseTooLarge extends Error {
  readonly code = 'RESPONSE_TOO_LARGE'
  readonly capBytes: number
  constructor(capBytes: number) {
    super(`The response is over ${capBytes} bytes.`)
    this.capBytes = capBytes
  }
}

/** A thrown value from an attempt, as a failure. */
export function classifyError(error: unknown, deadlineMs: number, budgetCut: boolean): Failure {
  if (error instanceof AttemptTimeout) return { type: 'timeout', deadlineMs, budgetCut }
  if (error instanceof ResponseTooLarge) return { type: 'too-large', capBytes: error.capBytes }
  const err = error as (NodeJS.ErrnoException & { statusCode?: unknown }) | undefined
  const message = err instanceof Error ? err.message : String(error)
  let code = typeof err?.code === 'string' ? err.code : undefined
  if (code === 'ERR_PROXY_TUNNEL') {
    return {
      type: 'proxy',
      status: typeof err?.statusCode === 'number' ? err.statusCode : undefined
    }
  }
  if (!code && /socket hang up/i.test(message)) code = 'ECONNRESET'
  return { type: 'network', code: code ?? 'ERROR', message }
}

/** Whether another attempt may help. */
export function isRetryable(failure: Failure): boolean {
  switch (failure.type) {
    case 'status':
      return isRetryableStatus(failure.response.status)
    case 'timeout':
      return true
    case 'network':
      return isRetryableNetworkCode(failure.code)
    case 'proxy':
      // No answer, or the proxy's own trouble reaching the service (502, 503, 504).
      return failure.status === undefined || !isConfigurationProxyStatus(failure.status)
    case 'too-large':
    case 'budget-spent':
      return false
  }
}

/** A proxy's 4XX to CONNECT (407 wrong credentials, 403 not allowed) is for the user to fix. */
export function isConfigurationProxyStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429
}
