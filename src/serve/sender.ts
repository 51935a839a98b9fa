/**
 * Sends the waiting changes to the service, oldest first, one at a time. While the service is
 * unreachable or answers 401, 403, 408, 429 or 5XX, the oldest waits and is tried again after a
 * backoff (one second, doubling up to five minutes), for at most a day from when it was accepted;
 * a rejected key is said once, loudly. Another 4XX drops the change with the service's words.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { formatDuration } from '../deploy.ts'
import { errorMessage } from '../errors.ts'
import { formatSeconds, plural } from '../helpers/text.ts'
import type { DeployChange } from './deploys.ts'
import type { Recorded } from './record.ts'
import type { Log, Metrics } from './server.ts'
import type { StateFolder, Waiting } from './state.ts'

export const SEND_POLICY = {
  /** The wait after a first failed attempt; each next one doubles, up to backoffMaxMs. */
  backoffBaseMs: 1_000,
  backoffMaxMs: 5 * 60_000,
  /** A change not recorded this long after it was accepted is dropped. */
  maxWaitMs: 24 * 60 * 60_000,
  /** Resolves after `ms`, or at once when the signal is aborted. */
  sleep: (ms: number, signal: AbortSignal): Promise<unknown> =>
    sleep(ms, undefined, { signal }).catch(() => undefined),
  clock: Date.now
}

export interface Sending {
  state: StateFolder
  /** One attempt: the core's seam (record.ts). */
  record: (change: DeployChange) => Promise<Recorded>
  log: Log
  metrics: Metrics
  policy?: Partial<typeof SEND_POLICY>
}

/** Sends until the signal is aborted; the change under way is finished first. */
export async function sendWaiting(sending: Sending, signal: AbortSignal): Promise<void> {
  const { state, log, metrics } = sending
  const policy = { ...SEND_POLICY, ...sending.policy }
  let failures = 0
  let keyRejectionSaid = false
  while (!signal.aborted) {
    const entry = state.next()
    if (entry === undefined) {
      await state.arrival(signal)
      continue
    }
    const recorded = await attempt(entry)
    if (!('wait' in recorded)) {
      failures = 0
      keyRejectionSaid = false
      await state.done(entry).catch((error: unknown) => {
        log(
          'warn',
          `A change sent could not be noted done (${errorMessage(error)}): a receiver started again sends it again.`
        )
      })
      continue
    }
    failures++
    const delay = Math.min(
      policy.backoffMaxMs,
      policy.backoffBaseMs * 2 ** Math.min(failures - 1, 30)
    )
    const waiting = plural(state.waitingCount, 'change')
    if (!recorded.keyRejected) {
      log(
        'warn',
        `${recorded.wait} ${waiting} wait; the next attempt is in ${formatSeconds(delay)}.`
      )
    } else if (!keyRejectionSaid) {
      keyRejectionSaid = true
      log(
        'error',
        `${recorded.wait} Nothing is dropped: ${waiting} wait until the key is accepted.`
      )
    }
    await policy.sleep(delay, signal)
  }

  /** Sends the change, unless it waited too long; says what became of it. */
  async function attempt(entry: Waiting): Promise<Recorded | { expired: true }> {
    const change = await state.read(entry).catch((error: unknown) => new Error(errorMessage(error)))
    if (change instanceof Error) {
      return { wait: `A waiting change could not be read: ${change.message}.`, keyRejected: false }
    }
    const { controller, object, service, outcome, deployKey } = change.notification
    const what = `${controller} ${object} (${service}, ${outcome})`
    const fields = { controller, object, deploy: deployKey }
    if (policy.clock() - entry.acceptedAt > policy.maxWaitMs) {
      metrics.dropped.expired++
      const since = new Date(entry.acceptedAt).toISOString()
      log(
        'error',
        `Dropped the change of ${what}: it was not recorded within ${formatDuration(policy.maxWaitMs / 1000)} of ${since}.`,
        fields
      )
      return { expired: true }
    }
    const recorded = await sending.record(change)
    if ('sent' in recorded) {
      metrics.recorded++
      log('info', `Recorded change ${recorded.sent}: ${what}.`, {
        ...fields,
        change_id: recorded.sent
      })
    } else if ('drop' in recorded) {
      metrics.dropped.refused++
      log('error', `Dropped the change of ${what}: ${recorded.drop}`, fields)
    }
    return recorded
  }
}
