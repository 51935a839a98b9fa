/**
 * A deploy recorded when its job ends: how it ended, when it started and finished, and how that
 * reads in a change's metadata and summary. Pure.
 */
/** How a deploy ended, whatever told it: the job's status, a deployment's state, a run's conclusion. */
export type DeployOutcome = 'success' | 'failure' | 'cancelled' | 'unknown'

/** How a title or a description says a deploy ended: "Deploy failed after 9 s". */
export const OUTCOME_WORDS: Record<DeployOutcome, string> = {
  success: 'succeeded',
  failure: 'failed',
  cancelled: 'cancelled',
  unknown: 'ended with an unknown status'
}

/** What an event says of how the deploy ended: the outcome, and the event's own word for it. */
export interface EventOutcome {
  outcome: DeployOutcome
  status: string
}

const OUTCOMES: Record<string, DeployOutcome> = {
  success: 'success',
  failure: 'failure',
  error: 'failure',
  timed_out: 'failure',
  startup_failure: 'failure',
  cancelled: 'cancelled'
}

/** The outcome a job status, a deployment state or a run's conclusion says; `unknown` for others. */
export function outcomeOf(status: string): DeployOutcome {
  return Object.hasOwn(OUTCOMES, status) ? OUTCOMES[status] : 'unknown'
}

/** How the job ended (`status` is job.status), and when. */
export interface DeployRecord extends EventOutcome {
  /** Milliseconds since the epoch: when the step before the deploy ran; unknown when its state was unusable. */
  startedAt?: number
  /** Milliseconds since the epoch: when the job's steps had ended. */
  finishedAt: number
}

/** Whole seconds between start and finish, never negative (a clock may step back). */
export function durationSeconds({ startedAt, finishedAt }: DeployRecord): number | undefined {
  return startedAt === undefined
    ? undefined
    : Math.max(0, Math.round((finishedAt - startedAt) / 1000))
}

/** The `deploy` key of custom_metadata. */
export function deployMetadata(deploy: DeployRecord): Record<string, unknown> {
  const { startedAt, finishedAt } = deploy
  return {
    outcome: deploy.outcome,
    status: deploy.status,
    ...(startedAt !== undefined && { started_at: new Date(startedAt).toISOString() }),
    finished_at: new Date(finishedAt).toISOString(),
    ...(startedAt !== undefined && { duration_seconds: durationSeconds(deploy) })
  }
}

/** "38 s", "4 min 12 s", "1 h 5 min": two units at most, the larger first. */
export function formatDuration(totalSeconds: number): string {
  const seconds = Math.max(0, Math.round(totalSeconds))
  const hours = Math.floor(seconds / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  const rest = seconds % 60
  if (hours > 0) return minutes > 0 ? `${hours} h ${minutes} min` : `${hours} h`
  if (minutes > 0) return rest > 0 ? `${minutes} min ${rest} s` : `${minutes} min`
  return `${rest} s`
}
