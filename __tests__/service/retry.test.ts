/** The retry policy's arithmetic: backoff with full jitter, and Retry-After. */
import { describe, expect, it } from '@jest/globals'
import { RETRY_POLICY, retryDelayMs, type RetryPolicy } from '../../src/service/retry.ts'

describe('retryDelayMs', () => {
  const policy = (random: () => number): RetryPolicy => ({ ...RETRY_POLICY, random })
  const now = Date.parse('2025-01-01T00:00:00Z')

  it('grows exponentially up to the cap, as the upper bound of the jitter', () => {
    const nearlyOne = policy(() => 0.999999)
    const ceilings = [1, 2, 3, 4, 5, 6, 7].map(attempt =>
      retryDelayMs(attempt, undefined, now, nearlyOne)
    )
    expect(ceilings).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000])
  })

  it('jitters across the whole range from 0 to the ceiling', () => {
    const delays = [0, 0.25].map(r =>
      retryDelayMs(
        3,
        undefined,
        now,
        policy(() => r)
      )
    )
    expect(delays).toEqual([0, 500])
  })

  it('uses Retry-After instead of the jitter, capped, never negative', () => {
    const jitter = policy(() => 0.5)
    expect(retryDelayMs(1, '3', now, jitter)).toBe(3000)
    expect(retryDelayMs(1, ' 0 ', now, jitter)).toBe(0)
    expect(retryDelayMs(1, '86400', now, jitter)).toBe(30_000)
    expect(retryDelayMs(1, 'Wed, 01 Jan 2025 00:00:12 GMT', now, jitter)).toBe(12_000)
    expect(retryDelayMs(1, 'Tue, 31 Dec 2024 23:00:00 GMT', now, jitter)).toBe(0)
  })

  it('falls back to the jittered backoff for an invalid Retry-After', () => {
    const jitter = policy(() => 0.5)
    for (const invalid of [undefined, '', 'soon', '1.5', '-3', '5s', 'Someday, never']) {
      expect(retryDelayMs(2, invalid, now, jitter)).toBe(500)
    }
  })
})
