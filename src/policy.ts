/**
 * When tracking fails a run: one table, the same for every door. A mistake the user must fix
 * fails loudly, but never before the deploy under `auto`; an outage never fails under `auto`;
 * `true` fails on every error where it happens; `false` never fails. A read's answer is what was
 * asked for, so a read fails on any error. A cancel exits with 128 plus the signal's number and
 * fails nothing under `auto` or `false`; a failure to report (an annotation refused, an output or
 * a file that cannot be written) is a warning under `auto` and `false`.
 */
import { failureKind } from './errors.ts'
import type { CallInFlight } from './service/client.ts'
import type { FailOnError } from './settings.ts'

/** Where the error happened: the key check before a deploy, recording, or a read. */
export type Moment = 'before-deploy' | 'recording' | 'reading'

/**
 * What went wrong: an input (a value to fix; nothing was sent), another mistake the user must fix,
 * an outage, a cancel (a signal), or a failure to report what happened.
 */
export type Trouble = 'input' | 'mistake' | 'outage' | 'cancel' | 'unreported'

/**
 * What the run does about it:
 * - failsNow: the run fails where it is; before a deploy, the deploy does not run;
 * - failsAfterDeploy: before a deploy, the deploy runs unrecorded, and the run fails once it ends;
 * - recordsAfterDeploy: before a deploy, the deploy runs, and its change is still recorded after;
 * - warns: one warning, and the run goes on (before a deploy: unrecorded).
 */
export type Verdict = 'failsNow' | 'failsAfterDeploy' | 'recordsAfterDeploy' | 'warns'

/** The doors whose process ends with an exit status. */
export type DoorName = 'action' | 'cli'

/** The status a failing run exits with; a cancel exits with 128 plus the signal's number. */
type Exit = number | 'signal'

type Row = [Moment | 'any', Trouble, auto: Verdict, true: Verdict, false: Verdict, Exit, Exit]

// prettier-ignore
const TABLE: readonly Row[] = [
  // moment          trouble       auto                  true        false                 action    cli
  ['before-deploy', 'input',      'failsAfterDeploy',   'failsNow', 'warns',              1,        1],
  ['before-deploy', 'mistake',    'failsAfterDeploy',   'failsNow', 'warns',              1,        1],
  ['before-deploy', 'outage',     'recordsAfterDeploy', 'failsNow', 'recordsAfterDeploy', 1,        1],
  ['recording',     'input',      'failsNow',           'failsNow', 'warns',              1,        2],
  ['recording',     'mistake',    'failsNow',           'failsNow', 'warns',              1,        1],
  ['recording',     'outage',     'warns',              'failsNow', 'warns',              1,        1],
  ['reading',       'input',      'failsNow',           'failsNow', 'failsNow',           1,        2],
  ['reading',       'mistake',    'failsNow',           'failsNow', 'failsNow',           1,        1],
  ['reading',       'outage',     'failsNow',           'failsNow', 'failsNow',           1,        1],
  ['any',           'cancel',     'warns',              'failsNow', 'warns',              'signal', 'signal'],
  ['any',           'unreported', 'warns',              'failsNow', 'warns',              1,        1]
]

const MODES: readonly FailOnError[] = ['auto', 'true', 'false']
const DOORS: readonly DoorName[] = ['action', 'cli']

/** What the table says of one error: the verdict, and each door's exit status by it. */
export interface Ruling {
  trouble: Trouble
  verdict: Verdict
  /** The exit status by door: the table's when the run fails or is cancelled, else 0. */
  exit: Record<DoorName, number>
}

/**
 * Whether a verdict fails a door's process: failing after the deploy fails the command line's,
 * which runs the deploy, but not the action's main step, which ends before its job's deploy (its
 * post step then fails).
 */
function failsIn(door: DoorName, verdict: Verdict): boolean {
  return verdict === 'failsNow' || (verdict === 'failsAfterDeploy' && door === 'cli')
}

/** The trouble an error is: who must act on it, or a cancel, or a failure to report. */
export function troubleOf(error: unknown): Trouble {
  if (error instanceof CancelledError) return 'cancel'
  if (error instanceof UnreportedError) return 'unreported'
  const kind = failureKind(error)
  return kind === 'input' || kind === 'outage' ? kind : 'mistake'
}

/** What an error means at this moment under this mode. */
export function rule(error: unknown, moment: Moment, mode: FailOnError): Ruling {
  const trouble = troubleOf(error)
  const row = TABLE.find(([at, named]) => named === trouble && (at === moment || at === 'any'))!
  const verdict = row[2 + MODES.indexOf(mode)] as Verdict
  const exitOf = (door: DoorName): number => {
    const exit = row[5 + DOORS.indexOf(door)] as Exit
    if (exit === 'signal') return SIGNAL_EXIT_CODES[(error as CancelledError).signal]
    return failsIn(door, verdict) ? exit : 0
  }
  return { trouble, verdict, exit: { action: exitOf('action'), cli: exitOf('cli') } }
}

/**
 * A door's exit status from the rulings of its run, in order: a cancel's, else a deploy's own
 * status (`deployExit`, when this process ran one) when it is not 0, else the first failing
 * ruling's, else 0.
 */
export function exitStatus(
  door: DoorName,
  rulings: readonly Ruling[],
  deployExit?: number
): number {
  const cancel = rulings.find(ruling => ruling.trouble === 'cancel')
  if (cancel) return cancel.exit[door]
  if (deployExit !== undefined && deployExit !== 0) return deployExit
  return rulings.find(ruling => ruling.exit[door] !== 0)?.exit[door] ?? 0
}

/** The shell's exit status for a process a signal ended. */
export const SIGNAL_EXIT_CODES: Record<string, number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 }

/** The run was stopped by a signal before it finished, with the calls then in flight. */
export class CancelledError extends Error {
  readonly signal: NodeJS.Signals
  readonly inFlight: readonly CallInFlight[]
  constructor(signal: NodeJS.Signals, inFlight: readonly CallInFlight[]) {
    super(`The run was cancelled (${signal}) before it finished.`)
    this.signal = signal
    this.inFlight = inFlight
  }
}

/** What happened could not all be reported: an output, an annotation or a file not written. */
export class UnreportedError extends Error {}
