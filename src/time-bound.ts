/**
 * Synchronous work with a hard time bound, for work whose cost outside text can blow up (a
 * regular expression that backtracks). The work runs under a node:vm script's timeout: when it
 * fires, V8's watchdog terminates whatever JavaScript is running, a regular expression in the
 * middle of its backtracking included, and the caller gets control back on time. Work that
 * finishes in time costs a watchdog thread's start, well under a millisecond.
 */
import { createContext, Script, type Context } from 'node:vm'

/** The outcome of bounded work: its value, or the news that it ran out of time. */
export type Bounded<T> = { finished: true; value: T } | { finished: false }

/** Node's code for the error a vm script's timeout throws. */
const TIMED_OUT = 'ERR_SCRIPT_EXECUTION_TIMEOUT'

/** A vm timeout is a whole, positive number of milliseconds. */
const MIN_TIMEOUT_MS = 1

// One context and one script for every call: the work itself runs in this realm, as a function
// the script calls, so nothing crosses realms but the call.
let sandbox: Context | undefined
const callWork = new Script('work()', { filename: 'time-bound' })

/**
 * Runs `work` and returns its value, unless it runs longer than `limitMs`: then it is stopped
 * where it stands and `{ finished: false }` is returned. An error thrown by `work` is thrown as
 * is. Stopped work leaves whatever it was building half-built: keep its state inside it.
 */
export function runWithin<T>(limitMs: number, work: () => T): Bounded<T> {
  let outcome: { value: T } | undefined
  let failure: { error: unknown } | undefined
  sandbox ??= createContext({})
  sandbox.work = () => {
    // A terminated run never reaches this catch: termination cannot be caught.
    try {
      outcome = { value: work() }
    } catch (error) {
      failure = { error }
      throw error
    }
  }
  try {
    callWork.runInContext(sandbox, { timeout: Math.max(MIN_TIMEOUT_MS, Math.ceil(limitMs)) })
  } catch (error) {
    if (failure) throw failure.error
    if (isTimeout(error)) return { finished: false }
    throw error
  } finally {
    // The closure holds the work and its data: do not keep them alive until the next call.
    sandbox.work = undefined
  }
  // The script returned, so the work did: its outcome is set.
  return { finished: true, value: (outcome as { value: T }).value }
}

function isTimeout(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === TIMED_OUT
}
