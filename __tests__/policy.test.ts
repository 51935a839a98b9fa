/**
 * The failure policy, one table for every door, tested as the table: each cell of `rule` (where
 * the error happened, what went wrong and the mode give a verdict and each door's exit status),
 * then `exitStatus`, which a door's run ends with. Each door's own tests check the cells as that
 * door applies them (action/policy.test.ts, cli/policy.test.ts).
 */
import { describe, expect, it } from '@jest/globals'
import { constants } from 'node:os'
import { InputError, ServiceError } from '../src/errors.ts'
import {
  CancelledError,
  exitStatus,
  rule,
  troubleOf,
  UnreportedError,
  type DoorName,
  type Moment,
  type Trouble,
  type Verdict
} from '../src/policy.ts'
import type { FailOnError } from '../src/settings.ts'

const service = (kind: ServiceError['kind']) =>
  new ServiceError(`GET /v2/hello failed (${kind})`, { kind, call: 'GET /v2/hello' })
const cancel = (signal: NodeJS.Signals) => new CancelledError(signal, [])

/** Every kind of error, by the trouble it is. */
const ERRORS: Record<Trouble, readonly unknown[]> = {
  input: [new InputError('labels', ' is invalid.')],
  mistake: [service('rejected'), service('protocol'), service('configuration'), new Error('boom')],
  outage: [service('outage')],
  cancel: [cancel('SIGINT'), cancel('SIGTERM'), cancel('SIGHUP')],
  unreported: [new UnreportedError('The change-id output could not be written.')]
}

/** A cell: the verdict, then the action's and the command line's exit status ('signal': 128 + n). */
type Cell = readonly [Verdict, action: number | 'signal', cli: number | 'signal']

// prettier-ignore
const TABLE: ReadonlyArray<readonly [Moment, Trouble, auto: Cell, true: Cell, false: Cell]> = [
  // moment          trouble        auto                                    true                              false
  ['before-deploy', 'input',      ['failsAfterDeploy', 0, 1],             ['failsNow', 1, 1],               ['warns', 0, 0]],
  ['before-deploy', 'mistake',    ['failsAfterDeploy', 0, 1],             ['failsNow', 1, 1],               ['warns', 0, 0]],
  ['before-deploy', 'outage',     ['recordsAfterDeploy', 0, 0],           ['failsNow', 1, 1],               ['recordsAfterDeploy', 0, 0]],
  ['before-deploy', 'cancel',     ['warns', 'signal', 'signal'],          ['failsNow', 'signal', 'signal'], ['warns', 'signal', 'signal']],
  ['before-deploy', 'unreported', ['warns', 0, 0],                        ['failsNow', 1, 1],               ['warns', 0, 0]],
  ['recording',     'input',      ['failsNow', 1, 2],                     ['failsNow', 1, 2],               ['warns', 0, 0]],
  ['recording',     'mistake',    ['failsNow', 1, 1],                     ['failsNow', 1, 1],               ['warns', 0, 0]],
  ['recording',     'outage',     ['warns', 0, 0],                        ['failsNow', 1, 1],               ['warns', 0, 0]],
  ['recording',     'cancel',     ['warns', 'signal', 'signal'],          ['failsNow', 'signal', 'signal'], ['warns', 'signal', 'signal']],
  ['recording',     'unreported', ['warns', 0, 0],                        ['failsNow', 1, 1],               ['warns', 0, 0]],
  ['reading',       'input',      ['failsNow', 1, 2],                     ['failsNow', 1, 2],               ['failsNow', 1, 2]],
  ['reading',       'mistake',    ['failsNow', 1, 1],                     ['failsNow', 1, 1],               ['failsNow', 1, 1]],
  ['reading',       'outage',     ['failsNow', 1, 1],                     ['failsNow', 1, 1],               ['failsNow', 1, 1]],
  ['reading',       'cancel',     ['warns', 'signal', 'signal'],          ['failsNow', 'signal', 'signal'], ['warns', 'signal', 'signal']],
  ['reading',       'unreported', ['warns', 0, 0],                        ['failsNow', 1, 1],               ['warns', 0, 0]]
]

const MODES: readonly FailOnError[] = ['auto', 'true', 'false']

/** The shell's status for a process a signal ended: 128 plus the signal's number. */
const signalled = (error: unknown): number =>
  128 + constants.signals[(error as CancelledError).signal]

const named = (status: number | 'signal'): string =>
  status === 'signal' ? '128 plus the signal’s number' : String(status)

describe('troubleOf: what went wrong, by who must act', () => {
  it.each(Object.entries(ERRORS))('reads each %s as one', (trouble, errors) => {
    for (const error of errors) expect(troubleOf(error)).toBe(trouble)
  })
})

describe('rule: what an error means where it happened, under each mode', () => {
  for (const [moment, trouble, ...cells] of TABLE) {
    MODES.forEach((mode, index) => {
      const [verdict, action, cli] = cells[index]
      const exits = `exit ${named(action)} (action) and ${named(cli)} (command line)`
      it(`${moment}, ${trouble}, fail-on-error ${mode}: ${verdict}, ${exits}`, () => {
        for (const error of ERRORS[trouble]) {
          const exitOf = (status: number | 'signal') =>
            status === 'signal' ? signalled(error) : status
          expect(rule(error, moment, mode)).toEqual({
            trouble,
            verdict,
            exit: { action: exitOf(action), cli: exitOf(cli) }
          })
        }
      })
    })
  }

  it('gives a cancel 128 plus its signal’s number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP', () => {
    const statuses = ERRORS.cancel.map(error => rule(error, 'recording', 'auto').exit.cli)
    expect(statuses).toEqual([130, 143, 129])
  })
})

describe('exitStatus: what a door’s run exits with, from its rulings in order', () => {
  const failing = rule(new InputError('labels', ' is invalid.'), 'recording', 'auto')
  const unreported = rule(ERRORS.unreported[0], 'recording', 'true')
  const warning = rule(service('outage'), 'recording', 'auto')
  const cancelled = rule(cancel('SIGTERM'), 'recording', 'false')
  const DOORS: readonly DoorName[] = ['action', 'cli']

  // prettier-ignore
  const CASES: ReadonlyArray<readonly [string, ReturnType<typeof rule>[], deployExit: number, action: number, cli: number]> = [
    // case                                                      rulings                                deploy  action  cli
    ['0 when nothing went wrong',                                [],                                    0,      0,      0],
    ['0 when nothing failed: a warning',                         [warning],                             0,      0,      0],
    ['the first failing ruling’s, by door',                      [warning, failing, unreported],        0,      1,      2],
    ['the first failing ruling’s, in the order given',           [unreported, failing],                 0,      1,      1],
    ['a deploy’s own non-zero status before any ruling’s',       [failing],                             3,      3,      3],
    ['a cancel’s before a deploy’s status and any other ruling', [failing, cancelled],                  3,      143,    143],
    ['a cancel’s, though it failed nothing',                     [cancelled],                           0,      143,    143]
  ]

  it.each(CASES)('is %s', (_, rulings, deployExit, action, cli) => {
    const expected: Record<DoorName, number> = { action, cli }
    for (const door of DOORS) expect(exitStatus(door, rulings, deployExit)).toBe(expected[door])
  })
})
