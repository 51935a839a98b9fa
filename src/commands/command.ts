import type { RunDefaults } from '../change.ts'
import type { DeployRecord } from '../deploy.ts'
import type { Report } from '../report.ts'
import type { ChangeService } from '../service/client.ts'
import type { Settings } from '../settings.ts'
import type { Shipped } from '../shipped/types.ts'

/**
 * What every command gets, whichever door it came through: the validated settings, the run as
 * plain data, the service and the report.
 */
export interface CommandContext {
  settings: Settings
  run: RunDefaults
  /** The service, or a dry run that prints each request (its answers are placeholders). */
  client: ChangeService
  report: Report
  /** Milliseconds since the epoch, now: when the change is recorded, for its lead time. */
  clock: () => number
  /** After the deploy (a job-end post step, a wrapped command): how it ended, and when it started. */
  deploy?: DeployRecord
  /** Aborted when the run is cancelled: the lookup stops, and the change is sent with what it knows. */
  signal?: AbortSignal
  /** What shipped, as the door can look it up (GitHub's API, the checkout); none when it cannot. */
  lookUp?: ShippedLookup
}

/** Looks up what a change's version (in its environment) ships; a failure is a warning, never thrown. */
export type ShippedLookup = (
  subject: { version: string; environment?: string },
  signal?: AbortSignal
) => Promise<{ shipped?: Shipped; warning?: string }>

export type CommandHandler = (context: CommandContext) => Promise<void>
