/**
 * Sending a validated source's batches, a few at a time, and saying which events were accepted
 * when one fails.
 */
import { inParallel } from '../helpers/send-all.ts'
import { plural } from '../helpers/text.ts'
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
  failure?: { error: unknown }
}

/**
 * Sends the validated batches, at most CONCURRENT_BATCHES in flight, each pulled from the source
 * only when a slot is free. `sendBatch` resolves to the ids accepted (the client checks that there
 * is one per event). A failed batch ends the stream: the ones in flight finish.
 */
export async function streamEvents(
  validated: ValidatedEvents,
  sendBatch: (batch: EventBatch) => Promise<readonly string[]>
): Promise<StreamResult> {
  const batches = eventBatches(validated)
  const accepted = new AcceptedIds()
  let failure: { error: unknown } | undefined
  try {
    await inParallel(CONCURRENT_BATCHES, async () => {
      try {
        const next = await batches.next()
        // Another batch may have failed while this one was being read: then it is not started.
        if (next.done || failure !== undefined) return false
        accepted.add(next.value.firstPosition, await sendBatch(next.value))
      } catch (error) {
        failure ??= { error }
      }
      return failure === undefined
    })
  } finally {
    await batches.return(undefined)
  }
  return { total: validated.total, accepted, failure }
}

/**
 * One line for humans after a failure, e.g. "Sent 2000 of 3500 events; events 1001–2000,
 * 3001–3500 were not accepted: <reason>", positions 1-based.
 */
export function describePartialFailure({ total, accepted }: StreamResult, reason: string): string {
  const missing = total - accepted.count
  if (missing === 0) return `Sent all ${plural(total, 'event')}, then: ${reason}`
  const ranges: string[] = []
  let next = 0
  for (const batch of [...accepted.batches(), { firstPosition: total, count: 0 }]) {
    const end = batch.firstPosition
    if (end > next) ranges.push(end - next === 1 ? `${end}` : `${next + 1}–${end}`)
    next = end + batch.count
  }
  const [events, were] = missing === 1 ? ['event', 'was'] : ['events', 'were']
  return `Sent ${accepted.count} of ${plural(total, 'event')}; ${events} ${ranges.join(', ')} ${were} not accepted: ${reason}`
}
