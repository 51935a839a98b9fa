/**
 * Synchronous work with a hard time bound, for work whose cost outside text can blow up: a node:vm
 * timeout makes V8 terminate whatever JavaScript runs, a regular expression mid-backtrack included.
 */
import { runInNewContext } from 'node:vm'

export type Bounded<T> = { finished: true; value: T } | { finished: false }

/** `work`'s own error is thrown as is. Stopped work leaves its state half-built: keep it inside. */
export function runWithin<T>(limitMs: number, work: () => T): Bounded<T> {
  let outcome = undefined as { value: T } | { error: unknown } | undefined
  // The work runs in this realm, called by the script; termination cannot be caught here.
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
    const timedOut = (error as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT'
    if (outcome === undefined && !timedOut) throw error
  }
  if (outcome === undefined) return { finished: false }
  if ('error' in outcome) throw outcome.error
  return { finished: true, value: outcome.value }
}
