/**
 * How long to wait before another attempt (exponential backoff with full jitter, or the service's
 * Retry-After), and how much time an outage may cost a run. What is retried is failures.ts's.
 */

/**
 * What an outage may cost one run, all requests together (a change and its heartbeat): failed
 * attempts and the waits between them.
 */
export const OUTAGE_BUDGET_MS = 60_000

export const RETRY_POLICY = {
  /** The first backoff's ceiling; each later one doubles, up to backoffMaxMs. */
  backoffBaseMs: 500,
  /** The largest jittered wait: a deploy should not stall on backoff alone. */
  backoffMaxMs: 8_000,
  /** A Retry-After longer than this is cut to it: the service may ask for hours. */
  retryAfterMaxMs: 30_000,
  outageBudgetMs: OUTAGE_BUDGET_MS,
  /** A retry is made only when at least this much budget would be left for its attempt. */
  minRetryAttemptMs: 1_000,
  /** A number in [0, 1), for the jitter. */
  random: Math.random,
  /** Resolves after `ms`, or at once when `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise(resolve => {
      const timer = setTimeout(resolve, ms)
      signal?.addEventListener('abort', () => {
        clearTimeout(timer)
        resolve()
      })
    })
}
export type RetryPolicy = typeof RETRY_POLICY

/**
 * How long to wait after failed attempt number `attempt` (1-based): a valid Retry-After (an
 * HTTP-date is relative to `now`) up to retryAfterMaxMs, else a jittered backoff.
 */
export function retryDelayMs(
  attempt: number,
  retryAfter: string | undefined,
  now: number,
  policy: RetryPolicy
): number {
  const value = retryAfter?.trim() ?? ''
  // delay-seconds is 1*DIGIT (RFC 9110): "1.5" and "-3" are invalid. An HTTP-date starts with a
  // weekday's name: Date.parse alone accepts too much ("5", "-3").
  let ms = /^\d+$/.test(value) ? Number(value) * 1000 : NaN
  if (/^[A-Za-z]{3,9},? /.test(value)) ms = Date.parse(value) - now
  if (!Number.isNaN(ms)) return Math.min(Math.max(ms, 0), policy.retryAfterMaxMs)
  const ceiling = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** (attempt - 1))
  return Math.round(policy.random() * ceiling)
}
