/**
 * A deploy recorded when its job ends: how it ended, when it started and finished, and how that
 * reads in a change's metadata, description and summary. Pure.
 */
import type { ChangeDefaults } from './change.ts'

/** How the job ended: the runner's job.status, or `unknown` for anything else. */
export type DeployOutcome = 'success' | 'failure' | 'cancelled' | 'unknown'

export interface DeployRecord {
  outcome: DeployOutcome
  /** Milliseconds since the epoch: when the step before the deploy ran. */
  startedAt: number
  /** Milliseconds since the epoch: when the job's steps had ended. */
  finishedAt: number
}

/** How a description says a deploy ended, when it did not succeed. */
const OUTCOME_WORDING: Record<Exclude<DeployOutcome, 'success'>, string> = {
  failure: 'failed',
  cancelled: 'cancelled',
  unknown: 'ended with an unknown status'
}

/** Whole seconds between start and finish, never negative (a clock may step back). */
export function durationSeconds(deploy: DeployRecord): number {
  return Math.max(0, Math.round((deploy.finishedAt - deploy.startedAt) / 1000))
}

/** The `deploy` key of custom_metadata. */
export function deployMetadata(deploy: DeployRecord): Record<string, unknown> {
  return {
    outcome: deploy.outcome,
    started_at: new Date(deploy.startedAt).toISOString(),
    finished_at: new Date(deploy.finishedAt).toISOString(),
    duration_seconds: durationSeconds(deploy)
  }
}

/** The change's created_at: the deploy's start, in Unix seconds. */
export function deployCreatedAt(deploy: DeployRecord): number {
  return Math.floor(deploy.startedAt / 1000)
}

/**
 * A description that says how the deploy ended when it did not succeed:
 * "Deploy acme/shop 6113728 to production failed after 4 min 12 s".
 */
export function describeOutcome(description: string, deploy: DeployRecord): string {
  if (deploy.outcome === 'success') return description
  const how = OUTCOME_WORDING[deploy.outcome]
  return `${description} ${how} after ${formatDuration(durationSeconds(deploy))}`
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

/**
 * The defaults of a change recorded at the job's end: created at the deploy's start, with the
 * `deploy` metadata, and a description that says when it did not succeed.
 */
export function withDeploy(
  defaults: ChangeDefaults,
  deploy: DeployRecord | undefined
): ChangeDefaults {
  if (deploy === undefined) return defaults
  return {
    ...defaults,
    description: describeOutcome(defaults.description, deploy),
    metadata: { ...defaults.metadata, deploy: deployMetadata(deploy) },
    createdAt: deployCreatedAt(deploy)
  }
}
