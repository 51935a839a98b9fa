/**
 * When tracking fails a run: one table, the same for both doors. A mistake the user must fix
 * fails loudly, but never before the deploy under `auto`; an outage never fails under `auto`;
 * `true` fails on every error where it happens; `false` never fails. A read's answer is what was
 * asked for, so a read fails on any error.
 */
import { failureKind } from './errors.ts'
import type { CallInFlight } from './service/client.ts'
import type { FailOnError } from './settings.ts'

/** Where the error happened: the key check before a deploy, recording, or a read. */
export type Moment = 'before-deploy' | 'recording' | 'reading'

export interface Verdict {
  /** The run fails where it is: before a deploy, the deploy does not run. */
  failsNow: boolean
  /** Before a deploy: the deploy's change is still recorded when it ends. */
  recordsAfter: boolean
  /** Before a deploy: the run fails once the deploy has run (the job at its end; `run` exits 1). */
  failsAfter: boolean
}

function V(failsNow: boolean, recordsAfter = false, failsAfter = false): Verdict {
  return { failsNow, recordsAfter, failsAfter }
}

// prettier-ignore
const TABLE: Record<Moment, Record<'mistake' | 'outage', Record<FailOnError, Verdict>>> = {
  'before-deploy': {
    mistake: { auto: V(false, false, true), true: V(true), false: V(false) },
    outage: { auto: V(false, true), true: V(true), false: V(false, true) }
  },
  recording: {
    mistake: { auto: V(true), true: V(true), false: V(false) },
    outage: { auto: V(false), true: V(true), false: V(false) }
  },
  reading: {
    mistake: { auto: V(true), true: V(true), false: V(true) },
    outage: { auto: V(true), true: V(true), false: V(true) }
  }
}

/** What an error means at this moment under this mode. */
export function verdictOn(error: unknown, moment: Moment, mode: FailOnError): Verdict {
  // A cancel is no one's mistake: like an outage, it fails only under `true`.
  const outage = error instanceof CancelledError || failureKind(error) === 'outage'
  return TABLE[moment][outage ? 'outage' : 'mistake'][mode]
}

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
