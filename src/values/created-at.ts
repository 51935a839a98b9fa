/** The created-at input: Unix seconds or milliseconds, or ISO 8601 with a time zone. */
import { quote } from '../errors.ts'
import { refusal } from './parsers.ts'
import { Inputs } from '../settings.ts'

/** created-at may lie at most this far in the future (clock skew between runner and service). */
const MAX_CREATED_AT_FUTURE_SECONDS = 24 * 60 * 60

/**
 * A Unix number is a time in these years, in seconds or in milliseconds. The two ranges do not
 * overlap, so the number says its unit; any other number (a typo, another unit) is refused rather
 * than read as a date nobody meant.
 */
const FIRST_UNIX_YEAR = 2000
const LAST_UNIX_YEAR = 2999
const EARLIEST_UNIX_SECONDS = Date.UTC(FIRST_UNIX_YEAR, 0, 1) / 1000
const END_OF_UNIX_SECONDS = Date.UTC(LAST_UNIX_YEAR + 1, 0, 1) / 1000

// Unix seconds or milliseconds; a sign is accepted only to say "out of range" rather than "bad form".
const UNIX_TIME = /^-?[0-9]+(?:\.[0-9]+)?$/
// A date, or a date-time with a time zone: a time without one would depend on the runner's zone.
const ISO_8601 =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,][0-9]+)?)?(?:[Zz]|([+-])([0-9]{2})(?::?([0-9]{2}))?))?$/
const CREATED_AT_FORMS =
  'Unix seconds (1763719200), Unix milliseconds (1763719200000), an ISO 8601 date (2025-11-21) or an ISO 8601 date-time with a time zone (2025-11-21T10:00:00Z, 2025-11-21T12:00:00+02:00)'

/** The time a change happened, as integer Unix seconds; undefined when empty. */
export function parseCreatedAt(raw: string, nowMs: number): number | undefined {
  const value = raw.trim()
  if (value === '') return undefined
  const refuse = (why: string, after = ''): never => {
    throw refusal(Inputs.CreatedAt, `${why}; got ${quote(raw)}.${after}`)
  }
  const match = ISO_8601.exec(value)
  let seconds = match ? isoToSeconds(match) : undefined
  if (UNIX_TIME.test(value)) {
    const number = Number(value)
    seconds = [number, number / 1000].find(
      time => time >= EARLIEST_UNIX_SECONDS && time < END_OF_UNIX_SECONDS
    )
    if (seconds === undefined) {
      refuse(
        `must be Unix seconds or Unix milliseconds of a time in the years ${FIRST_UNIX_YEAR} to ${LAST_UNIX_YEAR}`,
        ` Give the time the change happened, as ${CREATED_AT_FORMS}.`
      )
    }
  }
  if (Number.isNaN(seconds)) {
    refuse(
      'is not a real date and time (month 01-12, a day that exists in that month, hour 00-23, minute and second 00-59, offset up to ±23:59)'
    )
  }
  if (seconds === undefined) {
    if (ISO_8601.test(`${value}Z`)) {
      refuse(
        "is a date-time without a time zone: add Z or an offset such as +02:00, since the runner's own zone is arbitrary"
      )
    }
    return refuse(`must be ${CREATED_AT_FORMS}`)
  }
  const whole = Math.floor(seconds)
  if (whole < 0) refuse('must not be before 1970-01-01T00:00:00Z')
  if (whole > Math.floor(nowMs / 1000) + MAX_CREATED_AT_FUTURE_SECONDS) {
    const readAs = ` (read as ${new Date(whole * 1000).toISOString()})`
    refuse(
      `must not lie more than ${MAX_CREATED_AT_FUTURE_SECONDS / 3600} hours in the future${readAs}`,
      ` Give the time the change happened, as ${CREATED_AT_FORMS}.`
    )
  }
  return whole
}

/** Unix seconds of a matched ISO 8601 date or date-time, or NaN when a field is out of range. */
function isoToSeconds(match: RegExpExecArray): number {
  // A field not given (the time, the offset) is 0; match[7] is the offset's sign.
  const [y, mo, d, h, mi, s, , oh, om] = match.slice(1).map(field => Number(field ?? 0))
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not.
  const date = new Date(0)
  date.setUTCFullYear(y, mo - 1, d)
  // A day the month lacks (02-30) rolls over into the next month.
  const real = date.getUTCMonth() === mo - 1 && date.getUTCDate() === d
  if (!real || h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) return NaN
  date.setUTCHours(h, mi, s, 0)
  return date.getTime() / 1000 - (match[7] === '-' ? -1 : 1) * (oh * 60 + om) * 60
}
