/**
 * The linearity tests' instrument: it sees every way a pattern runs, and finds the shape that
 * restarts far, so that a test built on it fails when a scan would take the square of its text.
 */
import { describe, expect, it } from '@jest/globals'
import { restartsFar, scansOf } from './scans.ts'

describe('scansOf', () => {
  it('sees a pattern run by test, match, replace and split, with the longest text it was given', () => {
    const scans = scansOf(() => {
      ;/a/.test('xa')
      'a longer text'.match(/t/)
      'a b'.replace(/\s/g, '')
      'a,b'.split(/,/)
    })
    expect(scans.map(({ pattern }) => String(pattern))).toEqual(['/a/', '/t/', '/\\s/g', '/,/y'])
    expect(scans[1].longest).toBe('a longer text'.length)
  })

  it('puts exec back, even when the work throws', () => {
    const exec = RegExp.prototype.exec
    expect(() =>
      scansOf(() => {
        throw new Error('refused')
      })
    ).toThrow('refused')
    expect(RegExp.prototype.exec).toBe(exec)
  })
})

describe('restartsFar', () => {
  it.each([
    // Each can start again at every position and read to the end each time.
    [/\s*\(#(\d+)\)$/, true],
    [/a.*b/, true],
    [/^a|b+c/, true],
    [/^\s*x/m, true],
    [/x{2,}y/, true],
    // Anchored at the start: one attempt.
    [/^a.*b/, false],
    [/^(?:a|b)+c/, false],
    // Every repetition bounded: each attempt reads a few characters.
    [/\(#(\d{1,9})\)$/, false],
    // One class repeated: it fails at its first character or matches all it reads.
    [/\s+/g, false],
    // A star or a plus that is a character, escaped or in a class, repeats nothing.
    [/\*\+/, false],
    [/[*+\]]/, false]
  ])('%s: %s', (pattern, restarts) => {
    expect(restartsFar(pattern)).toBe(restarts)
  })
})
