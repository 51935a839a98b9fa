/**
 * Lead time for changes (one of the four DORA measures): how long the shipped commits waited,
 * from each one's committer date to the moment the change is recorded. Pure.
 */

/** A commit dated later than this after the change is dropped: a skewed clock, not a wait. */
export const MAX_COMMIT_CLOCK_SKEW_MS = 5 * 60 * 1000
/** A commit dated before this (older than Git itself) is dropped: a wrong date, not a wait. */
export const EARLIEST_COMMIT_DATE = Date.parse('2005-01-01T00:00:00Z')

export interface LeadTime {
  /** Whole seconds. */
  median: number
  /** Whole seconds: the oldest commit's wait. */
  max: number
  /** The commits measured. */
  commits: number
  /** Commits with a date that could not be a wait (too old, or after the change), left out. */
  dropped: number
}

/** The median and the longest wait of the commits with a plausible date; undefined when none has one. */
export function leadTime(
  commits: ReadonlyArray<{ committedAt?: string }>,
  recordedAt: number
): LeadTime | undefined {
  const dated = commits.map(commit => Date.parse(commit.committedAt ?? '')).filter(Number.isFinite)
  const waits = dated
    .filter(time => time >= EARLIEST_COMMIT_DATE && time <= recordedAt + MAX_COMMIT_CLOCK_SKEW_MS)
    // A commit a few minutes "after" the change (a skewed clock) waited no time at all.
    .map(time => Math.max(0, (recordedAt - time) / 1000))
    .sort((a, b) => a - b)
  if (waits.length === 0) return undefined
  const middle = Math.floor(waits.length / 2)
  const median = waits.length % 2 === 1 ? waits[middle] : (waits[middle - 1] + waits[middle]) / 2
  return {
    median: Math.round(median),
    max: Math.round(waits[waits.length - 1]),
    commits: waits.length,
    dropped: dated.length - waits.length
  }
}
