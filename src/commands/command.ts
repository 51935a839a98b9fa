import type { RunDefaults } from '../change.ts'
import type { DeployRecord } from '../deploy.ts'
import type { CommandResult, Report } from '../report.ts'
import type { ChangeRequest, ChangeService } from '../service/client.ts'
import type { Settings } from '../settings.ts'
import type { LookupSource } from '../shipped/lookup-source.ts'

/**
 * What every command gets, whichever door it came through: the validated settings, the run as
 * plain data, the service and the report (for progress lines: a command's outputs and summary are
 * its result).
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
  /** Where what shipped is read (GitHub's API, the checkout), as the door knows it; none when it cannot be. */
  lookup?: LookupSource
}

/** The changes a command recorded, each with the id the service gave it, beside its result. */
export type Recorded = CommandResult & { changes: { request: ChangeRequest; id: string }[] }

export type CommandHandler = (context: CommandContext) => Promise<CommandResult>
