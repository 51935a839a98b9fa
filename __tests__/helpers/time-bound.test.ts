import { describe, expect, it } from '@jest/globals'
import { runWithin } from '../../src/helpers/time-bound.ts'

/** Long enough for quick work on a busy machine; short enough to keep the suite fast. */
const LIMIT_MS = 100

/**
 * Nested quantifiers: a failing match backtracks exponentially in the subject's length, for far
 * longer than the test's own timeout, so a test that ends has seen the work stopped.
 */
const CATASTROPHIC = /^(a+)+b$/
const NEVER_MATCHES = `${'a'.repeat(40)}c`

describe('runWithin', () => {
  it("returns the work's value when it finishes in time", () => {
    expect(runWithin(LIMIT_MS, () => [1, 2, 3].map(n => n * 2))).toEqual({
      finished: true,
      value: [2, 4, 6]
    })
  })

  it('stops a regular expression in the middle of its backtracking, not before the limit', () => {
    const started = performance.now()
    expect(runWithin(LIMIT_MS, () => CATASTROPHIC.test(NEVER_MATCHES))).toEqual({ finished: false })
    expect(performance.now() - started).toBeGreaterThanOrEqual(LIMIT_MS - 1)
  })

  it('stops a busy loop', () => {
    const outcome = runWithin(LIMIT_MS, () => {
      for (;;) {
        // Spins until terminated.
      }
    })
    expect(outcome).toEqual({ finished: false })
  })

  it('runs later work normally after stopping one', () => {
    expect(runWithin(LIMIT_MS, () => CATASTROPHIC.test(NEVER_MATCHES)).finished).toBe(false)
    expect(runWithin(LIMIT_MS, () => CATASTROPHIC.test('aaab'))).toEqual({
      finished: true,
      value: true
    })
  })

  it("throws the work's own error as is, even one that looks like a timeout", () => {
    const mistake = new TypeError('not a path')
    expect(() =>
      runWithin(LIMIT_MS, () => {
        throw mistake
      })
    ).toThrow(mistake)
    const lookalike = Object.assign(new Error('timed out'), {
      code: 'ERR_SCRIPT_EXECUTION_TIMEOUT'
    })
    expect(() =>
      runWithin(LIMIT_MS, () => {
        throw lookalike
      })
    ).toThrow(lookalike)
  })

  it('accepts a limit that is not a whole number of milliseconds', () => {
    expect(runWithin(LIMIT_MS + 0.5, () => 'done')).toEqual({ finished: true, value: 'done' })
  })
})
