/** Bounded concurrency: a few tasks in flight at once, the next one started as soon as one ends. */

/**
 * Changes sent at once in a multi-service run: enough that 50 services take a few round trips,
 * few enough to stay far from the service's rate limits and from a burst of retries.
 */
export const MAX_CHANGES_IN_FLIGHT = 4

export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown }

/**
 * The one pool: `limit` workers, each calling `step` again as soon as it resolves, until it
 * resolves false. A step takes its own next item, so a lazy source is read no faster than it is
 * worked through.
 */
export async function inParallel(limit: number, step: () => Promise<boolean>): Promise<void> {
  const worker = async (): Promise<void> => {
    while (await step()) continue
  }
  await Promise.all(Array.from({ length: limit }, worker))
}

/**
 * Calls `task` for every item, at most `limit` at a time, and resolves when all have settled, in
 * input order. A task that throws or rejects yields `{ ok: false, error }`; this never rejects.
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
  await inParallel(Math.min(limit, items.length), async () => {
    if (next >= items.length) return false
    const index = next++
    try {
      results[index] = { ok: true, value: await task(items[index], index) }
    } catch (error) {
      results[index] = { ok: false, error }
    }
    return true
  })
  return results
}
