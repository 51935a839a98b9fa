/**
 * Runs one async task per item with a bounded number in flight, and never lets one failure stop
 * the others: every item gets a result, in input order.
 */

/**
 * Changes sent at once in a multi-service run: enough that 50 services take a few round trips,
 * few enough to stay far from the service's rate limits and from a burst of retries.
 */
export const MAX_CHANGES_IN_FLIGHT = 4

export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown }

/**
 * Calls `task` for every item, at most `limit` at a time, and resolves when all have settled.
 * A task that throws or rejects yields `{ ok: false, error }` in its place; it never rejects.
 */
export async function runAll<T, R>(
  items: T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>
): Promise<Array<Settled<R>>> {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`runAll needs a whole-number limit of at least 1; got ${limit}.`)
  }
  const results: Array<Settled<R>> = new Array(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      try {
        results[index] = { ok: true, value: await task(items[index], index) }
      } catch (error) {
        results[index] = { ok: false, error }
      }
    }
  }
  const workers = Array.from({ length: Math.min(limit, items.length) }, worker)
  await Promise.all(workers)
  return results
}
