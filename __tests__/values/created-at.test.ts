import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { parseCreatedAt } from '../../src/values/created-at.ts'
import { Inputs } from '../../src/settings.ts'
import { inputError } from '../support/input-error.ts'
import { hostileText, NUM_RUNS, resultOrInputError } from '../support/hostile-text.ts'

const NOW_MS = Date.UTC(2025, 10, 21, 12, 0, 0)
const NOW_S = NOW_MS / 1000
/** created-at may lie at most one day in the future. */
const LATEST_CREATED_AT = NOW_S + 86_400

describe('parseCreatedAt', () => {
  const NOV_21_10H = Date.UTC(2025, 10, 21, 10) / 1000

  it.each([
    ['Unix seconds', String(NOV_21_10H), NOV_21_10H],
    ['decimal Unix seconds, floored', `${NOV_21_10H}.999`, NOV_21_10H],
    ['Unix milliseconds', `${NOV_21_10H * 1000 + 999}`, NOV_21_10H],
    ['decimal Unix milliseconds, floored to the second', `${NOV_21_10H * 1000}.5`, NOV_21_10H],
    ['the first second of 2000 in Unix seconds', '946684800', 946684800],
    ['the first second of 2000 in Unix milliseconds', '946684800000', 946684800],
    ['an ISO date, as midnight UTC', '2025-11-21', Date.UTC(2025, 10, 21) / 1000],
    ['an ISO date-time in UTC', '2025-11-21T10:00:00Z', NOV_21_10H],
    ['fractional seconds, floored', '2025-11-21T10:00:00.999Z', NOV_21_10H],
    ['minutes only', '2025-11-21T10:00Z', NOV_21_10H],
    ['a positive offset', '2025-11-21T12:00:00+02:00', NOV_21_10H],
    ['a negative offset', '2025-11-21T05:30:00-04:30', NOV_21_10H],
    ['an offset without colon', '2025-11-21T12:00:00+0200', NOV_21_10H],
    ['lower-case t and z', '2025-11-21t10:00:00z', NOV_21_10H],
    ['a space separator', '2025-11-21 10:00:00Z', NOV_21_10H],
    ['a leap day', '2024-02-29', Date.UTC(2024, 1, 29) / 1000],
    ['the epoch', '1970-01-01T00:00:00Z', 0],
    ['exactly one day ahead', String(NOW_S + 86_400), NOW_S + 86_400]
  ])('reads %s', (_, raw, expected) => {
    expect(parseCreatedAt(raw, NOW_MS)).toBe(expected)
  })

  it('is undefined when empty', () => {
    expect(parseCreatedAt('', NOW_MS)).toBeUndefined()
  })

  it.each([
    'abc',
    'yesterday',
    '1e9',
    '0x10',
    '.5',
    '1.',
    '2025/11/21',
    '21-11-2025',
    '2025-11-21T10',
    '2025-11-21T10:00:00+2',
    'Fri, 21 Nov 2025 10:00:00 GMT',
    '2025-11-21T10:00:00Z trailing'
  ])('refuses %j, listing the accepted forms', raw => {
    const error = inputError(() => parseCreatedAt(raw, NOW_MS))
    expect(error.input).toBe(Inputs.CreatedAt)
    expect(error.message).toMatch(/^Input "created-at" must be Unix seconds/)
    expect(error.message).toContain('Unix milliseconds')
    expect(error.message).toContain('ISO 8601')
  })

  it('refuses a date-time without a time zone, saying so', () => {
    expect(inputError(() => parseCreatedAt('2025-11-21T10:00:00', NOW_MS)).message).toContain(
      'without a time zone'
    )
  })

  it.each([
    '2025-02-29',
    '2025-13-01',
    '2025-04-31',
    '2025-11-21T24:00:00Z',
    '2025-11-21T10:60Z',
    '2025-11-21T10:00:00+24:00'
  ])('refuses %j, which is not a real date or time', raw => {
    expect(inputError(() => parseCreatedAt(raw, NOW_MS)).message).toMatch(
      /^Input "created-at" is not a real date and time/
    )
  })

  it.each([
    ['10000-01-01 in Unix seconds', '253402300800'],
    ['the same, with a fraction', '253402300800.75'],
    ['the last second of 1999 in Unix seconds', '946684799'],
    ['the last millisecond of 1999 in Unix milliseconds', '946684799999'],
    ['3000-01-01 in Unix seconds', '32503680000'],
    ['3000-01-01 in Unix milliseconds', '32503680000000'],
    ['zero', '0'],
    ['minus zero', '-0'],
    ['a small number', '1'],
    ['a negative number', '-1'],
    ['negative milliseconds', '-1700000000000'],
    ['a number past any date', '9'.repeat(400)]
  ])('refuses %s, a number that is neither plausible seconds nor milliseconds', (_, raw) => {
    const error = inputError(() => parseCreatedAt(raw, NOW_MS))
    expect(error.input).toBe(Inputs.CreatedAt)
    expect(error.message).toMatch(
      /^Input "created-at" must be Unix seconds or Unix milliseconds of a time in the years 2000 to 2999; got "[-0-9.]+…?"( \(\d+ characters\))?\. Give the time the change happened, as Unix seconds/
    )
  })

  it.each(['1969-12-31T23:59:59Z', '0050-01-01'])('refuses %j before 1970', raw => {
    expect(inputError(() => parseCreatedAt(raw, NOW_MS)).message).toMatch(
      /^Input "created-at" must not be before 1970-01-01T00:00:00Z; got /
    )
  })

  it('refuses a time more than a day ahead, showing how it was read', () => {
    const raw = String(NOW_S + 86_400 + 1)
    const error = inputError(() => parseCreatedAt(raw, NOW_MS))
    expect(error.message).toContain('must not lie more than 24 hours in the future')
    expect(error.message).toContain('read as 2025-11-22T12:00:01.000Z')
    expect(inputError(() => parseCreatedAt('32503679999', NOW_MS)).message).toContain(
      'in the future (read as 2999-12-31T23:59:59.000Z)'
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
    const inRange = fc.integer({ min: Date.UTC(2000, 0, 1), max: LATEST_CREATED_AT * 1000 })
    fc.assert(
      fc.property(inRange, ms => {
        const seconds = Math.floor(ms / 1000)
        expect(parseCreatedAt(new Date(ms).toISOString(), NOW_MS)).toBe(seconds)
        expect(parseCreatedAt(String(seconds), NOW_MS)).toBe(seconds)
        expect(parseCreatedAt(String(ms), NOW_MS)).toBe(seconds)
      }),
      { numRuns: NUM_RUNS }
    )
  })
})
