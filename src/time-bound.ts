/**
 * Synchronous work with a hard time bound, for work whose cost outside text can blow up (a
 * regular expression that backtracks). The work runs under a node:vm script's timeout: when it
 * fires, V8's watchdog terminates whatever JavaScript is running, a regular expression in the
 * middle of its backtracking included, and the caller gets control back on time.
 */
import { runInNewContext } from 'node:vm'

/** The outcome of bounded work: its value, or the news that it ran out of time. */
export type Bounded<T> = { finished: true; value: T } | { finished: false }

/** Node's code for the error a vm script's timeout throws. */
const TIMED_OUT = 'ERR_SCRIPT_EXECUTION_TIMEOUT'

/**
 * Runs `work` and returns its value, unless it runs longer than `limitMs`: then it is stopped
 * where it stands and `{ finished: false }` is returned. An error thrown by `work` is thrown as
 * is. Stopped work leaves whatever it was building half-built: keep its state inside it.
 */
export function runWithin<T>(limitMs: number, work: () => T): Bounded<T> {
  let outcome: { value: T } | { error: unknown } | undefined
  // The work runs in this realm, as a function the script calls: nothing crosses realms but the
  // call. A terminated run never reaches the catch: termination cannot be caught.
  const call = (): void => {
    try {
      outcome = { value: work() }
    } catch (error) {
      outcome = { error }
    }
  }
  try {
    // A vm timeout is a whole, positive number of milliseconds.
    runInNewContext('call()', { call }, { timeout: Math.max(1, Math.ceil(limitMs)) })
  } catch (error) {
    // Work that ended just as the timeout fired keeps its outcome.
    if (outcome === undefined) {
      if ((error as { code?: unknown }).code !== TIMED_OUT) throw error
      return { finished: false }
    }
  }
  const ended = outcome as { value: T } | { error: unknown }
  if ('error' in ended) throw ended.error
  return { finished: true, value: ended.value }
}
