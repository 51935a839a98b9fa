/** What the input layer's property tests feed the parsers, and how they read the outcome. */
import { expect } from '@jest/globals'
import fc from 'fast-check'
import { InputError } from '../../src/errors.ts'

export const NUM_RUNS = 100

/** The commands README and action.yml list. */
export const COMMAND_NAMES = [
  'change',
  'heartbeat',
  'events',
  'event-results',
  'get-change',
  'hello'
]

export const character = (min: number, max: number): fc.Arbitrary<string> =>
  fc.integer({ min, max }).map(code => String.fromCharCode(code))

/**
 * Any code point but half a surrogate pair, as fast-check's `binary` unit gives, without what that
 * unit costs to build: a map of every code point, most of a second of each test file's start.
 */
export const anyCodePoint: fc.Arbitrary<string> = fc
  .integer({ min: 0, max: 0x10ffff - 0x800 })
  .map(index => String.fromCodePoint(index < 0xd800 ? index : index + 0x800))

/** Strings that stress each parser: unicode, controls, huge values, numbers and broken JSON. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string(), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme' }), weight: 3 },
  { arbitrary: fc.string({ unit: anyCodePoint }), weight: 3 },
  {
    arbitrary: fc.string({
      unit: fc.oneof(character(0, 0x20), character(0x7f, 0x9f), fc.constantFrom('a', ',', '['))
    }),
    weight: 2
  },
  {
    arbitrary: fc
      .tuple(
        fc.string({ unit: anyCodePoint, minLength: 1, maxLength: 8 }),
        fc.integer({ min: 100_000, max: 101_000 })
      )
      .map(([unit, length]) => unit.repeat(Math.ceil(length / unit.length))),
    weight: 1
  },
  {
    arbitrary: fc
      .oneof(fc.integer(), fc.double(), fc.bigInt(), fc.integer({ min: -20, max: 400 }))
      .map(String),
    weight: 2
  },
  { arbitrary: fc.json().map(json => json.slice(0, -1)), weight: 1 },
  { arbitrary: fc.json(), weight: 1 },
  {
    arbitrary: fc.constantFrom(
      '{"a":',
      '[',
      '["a",',
      '[1]',
      '[]',
      'true',
      'FALSE',
      'auto',
      'http://change-tracking.test/',
      'https://u:p@change-tracking.test/',
      'https://change-tracking.test/?q',
      '2025-11-21T10:00:00Z',
      '2025-02-30',
      '1763719200000',
      '..',
      ...COMMAND_NAMES
    ),
    weight: 2
  }
)

/** Runs a parser: its result, or undefined after checking that it threw an InputError for `name`. */
export function resultOrInputError<T>(name: string, parse: () => T): { value: T } | undefined {
  try {
    return { value: parse() }
  } catch (error) {
    if (!(error instanceof InputError)) throw error
    expect(error.input).toBe(name)
    expect(error.message).toContain(`Input "${name}"`)
    return undefined
  }
}
