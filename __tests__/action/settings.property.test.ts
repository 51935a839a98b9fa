import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import {
  COMMANDS,
  FAIL_ON_ERROR_MODES,
  Inputs,
  MAX_ATTEMPTS_MAX,
  MAX_ATTEMPTS_MIN,
  MAX_CREATED_AT_FUTURE_SECONDS,
  TIMEOUT_SECONDS_MAX,
  TIMEOUT_SECONDS_MIN
} from '../../src/action/names.ts'
import type { InputName } from '../../src/action/names.ts'
import { InputError } from '../../src/errors.ts'
import { inputError } from '../support/input-error.ts'
import { parseBaseUrl } from '../../src/action/base-url.ts'
import { parseCreatedAt } from '../../src/action/created-at.ts'
import {
  parseBoolean,
  parseEventIds,
  parseLabels,
  parseWholeNumber
} from '../../src/action/parsers.ts'
import { readSettings } from '../../src/action/settings.ts'
import type { Settings } from '../../src/action/settings.ts'

const NUM_RUNS = 200
const NOW_MS = Date.UTC(2025, 10, 21, 12, 0, 0)
const LATEST_CREATED_AT = Math.floor(NOW_MS / 1000) + MAX_CREATED_AT_FUTURE_SECONDS
const API_KEY = 'ctk_live_7f3a9c2e51b84d06a1e9f0c3b2d7e8a4'

/** Inputs that make every command's requirements hold, so a failure can only come from the input under test. */
const VALID_INPUTS: Partial<Record<InputName, string>> = {
  [Inputs.ApiKey]: API_KEY,
  [Inputs.BaseUrl]: 'https://change-tracking.test/api',
  [Inputs.HeartbeatId]: 'hb-1',
  [Inputs.ChangeId]: 'chg-1',
  [Inputs.EventIds]: 'e1,e2',
  [Inputs.Events]: '{"name":"deploy","data":{}}'
}

const character = (min: number, max: number): fc.Arbitrary<string> =>
  fc.integer({ min, max }).map(code => String.fromCharCode(code))

/** Strings that stress each parser: unicode, controls, huge values, numbers and broken JSON. */
const hostileText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string(), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme' }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary' }), weight: 3 },
  {
    arbitrary: fc.string({
      unit: fc.oneof(character(0, 0x20), character(0x7f, 0x9f), fc.constantFrom('a', ',', '['))
    }),
    weight: 2
  },
  {
    arbitrary: fc
      .tuple(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
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
      ...COMMANDS
    ),
    weight: 2
  }
)

/** What every Settings must satisfy, whatever the inputs were. */
function expectWellFormed(settings: Settings): void {
  expect(settings.apiKey).not.toBe('')
  expect(settings.baseUrl.protocol).toBe('https:')
  expect(settings.baseUrl.pathname.endsWith('/')).toBe(true)
  expect(settings.baseUrl.href).not.toMatch(/[?#]/)
  expect(COMMANDS).toContain(settings.command)
  expect(FAIL_ON_ERROR_MODES).toContain(settings.failOnError)
  expect(settings.timeoutSeconds).toBeGreaterThanOrEqual(TIMEOUT_SECONDS_MIN)
  expect(settings.timeoutSeconds).toBeLessThanOrEqual(TIMEOUT_SECONDS_MAX)
  expect(settings.maxAttempts).toBeGreaterThanOrEqual(MAX_ATTEMPTS_MIN)
  expect(settings.maxAttempts).toBeLessThanOrEqual(MAX_ATTEMPTS_MAX)
  const { createdAt } = settings.change
  if (createdAt !== undefined) {
    expect(Number.isInteger(createdAt)).toBe(true)
    expect(createdAt).toBeGreaterThanOrEqual(0)
    expect(createdAt).toBeLessThanOrEqual(LATEST_CREATED_AT)
  }
}

/** A message fit for a log line: bounded, no raw control characters, no key. */
function expectPrintable(message: string, apiKey: string): void {
  expect(message.length).toBeLessThan(1000)
  expect(message).not.toMatch(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u)
  if (apiKey.length >= 8) expect(message).not.toContain(apiKey)
}

describe('readSettings with hostile input', () => {
  it.each(Object.values(Inputs))(
    'returns valid Settings or an InputError naming %s, and nothing else',
    name => {
      fc.assert(
        fc.property(fc.constantFrom(...COMMANDS), hostileText, (command, value) => {
          const inputs: Partial<Record<string, string>> = {
            ...VALID_INPUTS,
            [Inputs.Command]: command,
            [name]: value
          }
          // As the runner does: inputs arrive trimmed.
          const getInput = (input: string): string => (inputs[input] ?? '').trim()
          let settings: Settings
          try {
            settings = readSettings(getInput, { now: NOW_MS })
          } catch (error) {
            if (!(error instanceof InputError)) throw error
            expect(error.message).toContain(`"${name}"`)
            expectPrintable(error.message, getInput(Inputs.ApiKey))
            return
          }
          expectWellFormed(settings)
        }),
        { numRuns: NUM_RUNS }
      )
    }
  )

  it('never quotes any part of the key, wherever it is pasted', () => {
    const visibleAscii = character(0x21, 0x7e)
    fc.assert(
      fc.property(
        fc.string({ unit: visibleAscii, minLength: 16, maxLength: 80 }),
        fc.constantFrom(...Object.values(Inputs).filter(name => name !== Inputs.ApiKey)),
        fc.string({ maxLength: 50 }),
        (apiKey, name, around) => {
          const inputs: Partial<Record<string, string>> = {
            ...VALID_INPUTS,
            [Inputs.ApiKey]: apiKey,
            [name]: `${around}${apiKey}${around}`.trim()
          }
          const error = inputError(() =>
            readSettings(input => inputs[input] ?? '', { now: NOW_MS })
          )
          expect(error.message).not.toContain(apiKey.slice(0, 12))
        }
      ),
      { numRuns: NUM_RUNS }
    )
  })
})

/** Runs a parser: its result, or undefined after checking that it threw an InputError for `name`. */
function resultOrInputError<T>(name: string, parse: () => T): { value: T } | undefined {
  try {
    return { value: parse() }
  } catch (error) {
    if (!(error instanceof InputError)) throw error
    expect(error.input).toBe(name)
    expect(error.message).toContain(`Input "${name}"`)
    return undefined
  }
}

describe('parser properties', () => {
  it('parseLabels never returns an empty, untrimmed, duplicate or comma-holding label', () => {
    const labelText = fc.oneof(
      hostileText,
      fc
        .array(fc.constantFrom('a', 'b', ' a', 'b ', '', ' ', '🚀', 'x,y', '\n', '\r\n'), {
          maxLength: 12
        })
        .map(parts => parts.join(','))
    )
    fc.assert(
      fc.property(labelText, raw => {
        const result = resultOrInputError(Inputs.Labels, () => parseLabels(raw))
        if (result === undefined || result.value === undefined) return
        const labels = result.value
        expect(labels.length).toBeGreaterThan(0)
        expect(new Set(labels).size).toBe(labels.length)
        for (const label of labels) {
          expect(label).not.toBe('')
          expect(label).toBe(label.trim())
          expect(label).not.toMatch(/[,\r\n]/)
        }
      }),
      { numRuns: NUM_RUNS }
    )
  })

  it('parseCreatedAt returns integer seconds from 1970 to a day from now', () => {
    const timeText = fc.oneof(
      hostileText,
      fc.integer({ min: -1e10, max: 1e13 }).map(String),
      fc.double({ min: -1e3, max: 2e9, noNaN: true }).map(String),
      fc
        .date({ min: new Date(-1e12), max: new Date(NOW_MS + 3 * 86_400_000), noInvalidDate: true })
        .map(date => date.toISOString())
    )
    fc.assert(
      fc.property(timeText, raw => {
        const result = resultOrInputError(Inputs.CreatedAt, () => parseCreatedAt(raw, NOW_MS))
        if (result === undefined) return
        if (result.value === undefined) {
          expect(raw.trim()).toBe('')
          return
        }
        expect(Number.isInteger(result.value)).toBe(true)
        expect(result.value).toBeGreaterThanOrEqual(0)
        expect(result.value).toBeLessThanOrEqual(LATEST_CREATED_AT)
      }),
      { numRuns: NUM_RUNS }
    )
  })

  it('parseCreatedAt reads back every ISO time and Unix time in range', () => {
    const inRange = fc.integer({ min: 0, max: LATEST_CREATED_AT * 1000 })
    fc.assert(
      fc.property(inRange, ms => {
        const seconds = Math.floor(ms / 1000)
        expect(parseCreatedAt(new Date(ms).toISOString(), NOW_MS)).toBe(seconds)
        expect(parseCreatedAt(String(seconds), NOW_MS)).toBe(seconds)
        if (ms > 1e11) expect(parseCreatedAt(String(ms), NOW_MS)).toBe(seconds)
      }),
      { numRuns: NUM_RUNS }
    )
  })

  it('parseWholeNumber stays within its bounds and reads back every number in them', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.oneof(hostileText, fc.integer({ min: -10, max: 2000 }).map(String)),
        (a, b, raw) => {
          const [min, max] = a <= b ? [a, b] : [b, a]
          const result = resultOrInputError('n', () => parseWholeNumber('n', raw, min, max))
          if (result !== undefined) {
            expect(Number.isInteger(result.value)).toBe(true)
            expect(result.value).toBeGreaterThanOrEqual(min)
            expect(result.value).toBeLessThanOrEqual(max)
          }
          expect(parseWholeNumber('n', String(min), min, max)).toBe(min)
          expect(parseWholeNumber('n', String(max), min, max)).toBe(max)
        }
      ),
      { numRuns: NUM_RUNS }
    )
  })

  it('parseBoolean accepts only true and false, in any letter case', () => {
    fc.assert(
      fc.property(hostileText, raw => {
        const result = resultOrInputError('flag', () => parseBoolean('flag', raw))
        const word = raw.trim().toLowerCase()
        expect(result?.value).toBe(word === 'true' ? true : word === 'false' ? false : undefined)
      }),
      { numRuns: NUM_RUNS }
    )
  })

  it('parseBaseUrl returns only https roots ending in "/", without query or fragment', () => {
    const urlText = fc.oneof(
      hostileText,
      fc.webUrl({ withQueryParameters: true, withFragments: true })
    )
    fc.assert(
      fc.property(urlText, raw => {
        const result = resultOrInputError(Inputs.BaseUrl, () => parseBaseUrl(raw))
        if (result === undefined) return
        expect(result.value.protocol).toBe('https:')
        expect(result.value.pathname.endsWith('/')).toBe(true)
        expect(result.value.href).not.toMatch(/[?#]/)
        expect(result.value.username + result.value.password).toBe('')
      }),
      { numRuns: NUM_RUNS }
    )
  })

  it('parseEventIds returns trimmed, unique, non-empty ids, and reads a JSON array back', () => {
    const id = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 12 })
      .filter(text => text.trim() === text && text !== '' && text !== '.' && text !== '..')
      .filter(text => !/\p{Cc}/u.test(text))
    fc.assert(
      fc.property(hostileText, fc.array(id, { minLength: 1, maxLength: 20 }), (raw, ids) => {
        const result = resultOrInputError(Inputs.EventIds, () => parseEventIds(raw))
        if (result?.value !== undefined) {
          expect(new Set(result.value).size).toBe(result.value.length)
          for (const eventId of result.value) {
            expect(eventId).not.toBe('')
            expect(eventId).toBe(eventId.trim())
          }
        }
        expect(parseEventIds(JSON.stringify(ids))).toEqual([...new Set(ids)])
      }),
      { numRuns: NUM_RUNS }
    )
  })
})
