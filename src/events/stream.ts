/**
 * Sending a validated source's batches, a few at a time, and saying which events were accepted
 * when one fails.
 */
import { errorMessage } from '../errors.ts'
import { inParallel } from '../send-all.ts'
import { plural } from '../text.ts'
import { AcceptedIds } from './accepted-ids.ts'
import { eventBatches, type EventBatch } from './batches.ts'
import type { ValidatedEvents } from './validate.ts'

/**
 * Batches in flight at once: enough to overlap reading the file with the service's answers,
 * few enough that memory holds only a few 1 MB bodies.
 */
export const CONCURRENT_BATCHES = 4

export interface StreamResult {
  /** How many events the input holds. */
  total: number
  /** The ids the service accepted, in input order. */
  accepted: AcceptedIds
  /** Set when a batch failed: no batch was started after it. */
  failure?: {
    error: unknown
    /** The 1-based positions that were not accepted, e.g. "events 1001–2000, 3001–3500". */
    notSent: string
    acceptedCount: number
  }
}

/**
 * Sends the batches of what validateEvents returned, at most CONCURRENT_BATCHES in flight, pulling
 * each from the source only when a slot is free. `sendBatch` resolves to the ids the service
 * accepted (the client checks that there is one per event). A batch that fails ends the stream:
 * no batch is started after it, the ones in flight finish, and the result says which events
 * were accepted and which were not.
 */
export async function streamEvents(
  validated: ValidatedEvents,
  sendBatch: (batch: EventBatch) => Promise<readonly string[]>
): Promise<StreamResult> {
  const { total } = validated
  const batches = eventBatches(validated)
  const accepted = new AcceptedIds()
  let failure: { error: unknown } | undefined

  try {
    await inParallel(CONCURRENT_BATCHES, async () => {
      let next: IteratorResult<EventBatch>
      try {
        next = await batches.next()
      } catch (error) {
        failure ??= { error }
        return false
      }
      // Another batch may have failed while this one was being read: then it is not started.
      if (next.done || failure !== undefined) return false
      try {
        accepted.add(next.value.firstPosition, await sendBatch(next.value))
      } catch (error) {
        failure ??= { error }
      }
      return failure === undefined
    })
  } finally {
    await batches.return(undefined)
  }

  if (failure === undefined) return { total, accepted }
  return {
    total,
    accepted,
    failure: {
      error: failure.error,
      notSent: describePositions(missingRanges(accepted.batches(), total)),
      acceptedCount: accepted.count
    }
  }
}

/**
 * One line for humans, e.g. "Sent 2000 of 2100 events; events 2001–2100 were not accepted: …".
 * `reason` is the failure's message, as the caller words it (errorMessage of the error unless
 * given).
 */
export function describePartialFailure(result: StreamResult, reason?: string): string {
  const { total, failure } = result
  if (failure === undefined) return `Sent all ${plural(total, 'event')}.`
  const why = reason ?? errorMessage(failure.error)
  const notAccepted = total - failure.acceptedCount
  if (notAccepted === 0) return `Sent all ${plural(total, 'event')}, then: ${why}`
  const verb = notAccepted === 1 ? 'was' : 'were'
  return `Sent ${failure.acceptedCount} of ${plural(total, 'event')}; ${failure.notSent} ${verb} not accepted: ${why}`
}

/**
 * 0-based, end-exclusive ranges as 1-based positions: [[1000, 2000], [4, 5]] →
 * "events 1001–2000, 5". A single position reads "event 5"; no positions read "no events".
 */
export function describePositions(ranges: ReadonlyArray<readonly [number, number]>): string {
  const nonEmpty = ranges.filter(([start, end]) => end > start)
  const count = nonEmpty.reduce((sum, [start, end]) => sum + end - start, 0)
  if (count === 0) return 'no events'
  const parts = nonEmpty.map(([start, end]) =>
    end - start === 1 ? `${start + 1}` : `${start + 1}–${end}`
  )
  return `${count === 1 ? 'event' : 'events'} ${parts.join(', ')}`
}

/** The gaps between accepted batches (sorted by position) in [0, total), end-exclusive. */
function missingRanges(
  accepted: ReadonlyArray<{ firstPosition: number; count: number }>,
  total: number
): Array<[number, number]> {
  const ranges: Array<[number, number]> = []
  let next = 0
  for (const batch of accepted) {
    if (batch.firstPosition > next) ranges.push([next, batch.firstPosition])
    next = batch.firstPosition + batch.count
  }
  if (next < total) ranges.push([next, total])
  return ranges
}
