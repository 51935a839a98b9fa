/** Reading outside JSON without trusting it: counts, SHAs, timestamps and lists. */
import { describe, expect, it } from '@jest/globals'
import {
  countOf,
  isFullSha,
  listOf,
  textOf,
  timestampOf,
  untrusted
} from '../../src/shipped/untrusted.ts'

describe('countOf', () => {
  it.each([[0], [1], [600], [Number.MAX_SAFE_INTEGER]])('takes %p', value => {
    expect(countOf(value)).toBe(value)
  })
  it.each([[-1], [1.5], [2 ** 53], [Number.NaN], [Infinity], ['600'], [null], [600n]])(
    'refuses %p',
    value => {
      expect(countOf(value)).toBeUndefined()
    }
  )
})

describe('isFullSha', () => {
  it('takes 40 or 64 hex digits in either case, nothing else', () => {
    expect(isFullSha('a'.repeat(40))).toBe(true)
    expect(isFullSha('A'.repeat(64))).toBe(true)
    expect(isFullSha('a'.repeat(41))).toBe(false)
    expect(isFullSha('g'.repeat(40))).toBe(false)
    expect(isFullSha(40)).toBe(false)
  })
})

describe('timestampOf', () => {
  it.each(['2026-03-01T10:00:05Z', '2026-03-01T10:00:05.123Z', '2026-03-01T10:00:05+02:00'])(
    'takes %s',
    value => {
      expect(timestampOf(value)).toBe(value)
    }
  )
  it.each(['2026-03-01', 'yesterday', '2026-13-01T00:00:00Z', '2026-03-01T25:00:00Z', 1772359140])(
    'refuses %p',
    value => {
      expect(timestampOf(value)).toBeUndefined()
    }
  )
})

describe('reading an answer of the wrong shape', () => {
  it('never throws, whatever stands where an object or a list should', () => {
    for (const value of [
      null,
      undefined,
      7,
      'text',
      [],
      {},
      { commits: 'x' },
      { commits: [null] }
    ]) {
      const answer = untrusted<{ commits: { sha: string }[]; status: string }>(value)
      expect(() => listOf(answer?.commits)?.map(commit => commit?.sha)).not.toThrow()
      expect(textOf(answer?.status)).toBeUndefined()
    }
    expect(listOf(untrusted<{ commits: string[] }>({ commits: 'abc' })?.commits)).toBeUndefined()
  })
})
