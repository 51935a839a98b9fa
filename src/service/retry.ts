/**
 * How long to wait before another attempt (exponential backoff with full jitter, or the service's
 * Retry-After), and how much time an outage may cost a run. What is retried is failures.ts's.
 */

/**
 * What an outage may cost one run, all requests together: failed attempts and the waits between
 * them. With the defaults (30 s attempts, 4 of them) a hanging service costs at most this, a
 * change and its heartbeat included.
 */
export const OUTAGE_BUDGET_MS = 60_000

export interface RetryPolicy {
  /** The first backoff's ceiling; each later one doubles, up to backoffMaxMs. */
  backoffBaseMs: number
  /** The largest jittered wait: a deploy should not stall on backoff alone. */
  backoffMaxMs: number
  /** A Retry-After longer than this is cut to it: the service may ask for hours. */
  retryAfterMaxMs: number
  /** OUTAGE_BUDGET_MS unless told. */
  outageBudgetMs: number
  /** A retry is made only when at least this much budget would be left for its attempt. */
  minRetryAttemptMs: number
  /** A number in [0, 1), for the jitter. */
  random: () => number
  sleep: (ms: number) => Promise<void>
}

export const RETRY_POLICY: RetryPolicy = {
  backoffBaseMs: 500,
  backoffMaxMs: 8_000,
  retryAfterMaxMs: 30_000,
  outageBudgetMs: OUTAGE_BUDGET_MS,
  minRetryAttemptMs: 1_000,
  random: Math.random,
  sleep: ms => new Promise(resolve => setTimeout(resolve, ms))
}

/**
 * How long to wait after failed attempt number `attempt` (1-based) before the next one: a valid
 * Retry-After (delay-seconds or an HTTP-date, relative to `now`), between 0 and retryAfterMaxMs;
 * else random() * min(backoffMaxMs, backoffBaseMs * 2^(attempt-1)).
 */
export function retryDelayMs(
  attempt: number,
  retryAfterHeader: string | undefined,
  now: number,
  policy: RetryPolicy
): number {
  const retryAfter = parseRetryAfterMs(retryAfterHeader, now)
  if (retryAfter !== undefined) return Math.min(Math.max(retryAfter, 0), policy.retryAfterMaxMs)
  const ceiling = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** (attempt - 1))
  return Math.round(policy.random() * ceiling)
}

/** A Retry-After header as milliseconds from `now`; undefined when absent or not valid. */
export function parseRetryAfterMs(header: string | undefined, now: number): number | undefined {
  const value = header?.trim()
  if (!value) return undefined
  // delay-seconds is 1*DIGIT (RFC 9110); anything else numeric-looking ("1.5", "-3") is invalid.
  if (/^\d+$/.test(value)) return Number(value) * 1000
  // An HTTP-date starts with a weekday name; Date.parse alone accepts too much ("5", "-3").
  if (!/^[A-Za-z]{3,9},? /.test(value)) return undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : date - now
}
