/**
 * Lead time for changes (one of the four DORA measures): how long the shipped commits waited,
 * from each one's committer date to the moment the change is recorded. Pure.
 */

export interface LeadTime {
  /** Whole seconds. */
  median: number
  /** Whole seconds: the oldest commit's wait. */
  max: number
}

/**
 * The median and the longest wait of the commits with a date; undefined when none has one.
 * A commit dated after `recordedAt` (a skewed clock) waited 0 s.
 */
export function leadTime(
  commits: ReadonlyArray<{ committedAt?: string }>,
  recordedAt: number
): LeadTime | undefined {
  const waits = commits
    .map(commit => (commit.committedAt === undefined ? NaN : Date.parse(commit.committedAt)))
    .filter(time => Number.isFinite(time))
    .map(time => Math.max(0, (recordedAt - time) / 1000))
    .sort((a, b) => a - b)
  if (waits.length === 0) return undefined
  const middle = Math.floor(waits.length / 2)
  const median = waits.length % 2 === 1 ? waits[middle] : (waits[middle - 1] + waits[middle]) / 2
  return { median: Math.round(median), max: Math.round(waits[waits.length - 1]) }
}
