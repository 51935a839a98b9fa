/**
 * The failure policy, one table for both doors: every cell, by moment, kind and mode.
 */
import { describe, expect, it } from '@jest/globals'
import { InputError, ServiceError } from '../src/errors.ts'
import { CancelledError, verdictOn, type Moment } from '../src/policy.ts'
import type { FailOnError } from '../src/settings.ts'

const service = (kind: ServiceError['kind']) =>
  new ServiceError(kind, { kind, call: 'GET /v1/hello' })
const MISTAKES = [
  new InputError('labels', ' is invalid.'),
  service('rejected'),
  service('protocol'),
  service('configuration'),
  new Error('unexpected')
]
const OUTAGES = [service('outage'), new CancelledError('SIGTERM', [])]

/** [failsNow, recordsAfter, failsAfter] for a mistake and for an outage, by mode. */
const TABLE: Record<Moment, Record<FailOnError, [number[], number[]]>> = {
  'before-deploy': {
    auto: [
      [0, 0, 1],
      [0, 1, 0]
    ],
    true: [
      [1, 0, 0],
      [1, 0, 0]
    ],
    false: [
      [0, 0, 0],
      [0, 1, 0]
    ]
  },
  recording: {
    auto: [
      [1, 0, 0],
      [0, 0, 0]
    ],
    true: [
      [1, 0, 0],
      [1, 0, 0]
    ],
    false: [
      [0, 0, 0],
      [0, 0, 0]
    ]
  },
  reading: {
    auto: [
      [1, 0, 0],
      [1, 0, 0]
    ],
    true: [
      [1, 0, 0],
      [1, 0, 0]
    ],
    false: [
      [1, 0, 0],
      [1, 0, 0]
    ]
  }
}

describe('verdictOn: what an error means, where it happens, under each mode', () => {
  for (const [moment, modes] of Object.entries(TABLE) as [Moment, (typeof TABLE)[Moment]][]) {
    for (const [mode, [mistake, outage]] of Object.entries(modes) as [FailOnError, number[][]][]) {
      it(`${moment}, fail-on-error ${mode}: a mistake ${mistake.join('')}, an outage ${outage.join('')}`, () => {
        const as = ([failsNow, recordsAfter, failsAfter]: number[]) => ({
          failsNow: failsNow === 1,
          recordsAfter: recordsAfter === 1,
          failsAfter: failsAfter === 1
        })
        for (const error of MISTAKES) expect(verdictOn(error, moment, mode)).toEqual(as(mistake))
        for (const error of OUTAGES) expect(verdictOn(error, moment, mode)).toEqual(as(outage))
      })
    }
  }
})
