import type { RunContext } from '../action/run-context.ts'
import type { Settings } from '../action/settings.ts'
import type { DeployRecord } from '../deploy.ts'
import type { Report } from '../report.ts'
import type { ChangeService } from '../service/client.ts'

/** What every command gets: the validated settings, the run's context, the service and the report. */
export interface CommandContext {
  settings: Settings
  run: RunContext
  /** The service, or a dry run that prints each request (its answers are placeholders). */
  client: ChangeService
  report: Report
  /** Milliseconds since the epoch, now: when the change is recorded, for its lead time. */
  clock: () => number
  /** In the post step of `record-at: job-end`: how the deploy ended, and when it started. */
  deploy?: DeployRecord
  /** Aborted when the run is cancelled: the lookup stops, and the change is sent with what it knows. */
  signal?: AbortSignal
}

export type CommandHandler = (context: CommandContext) => Promise<void>
