import type { RunContext } from '../action/run-context.ts'
import type { Settings } from '../action/settings.ts'
import type { Report } from '../report.ts'
import type { ChangeService } from '../service/client.ts'

/** What every command gets: the validated settings, the run's context, the service and the report. */
export interface CommandContext {
  settings: Settings
  run: RunContext
  /** The service, or a dry run that prints each request and answers `undefined` (not sent). */
  client: ChangeService
  report: Report
}

export type CommandHandler = (context: CommandContext) => Promise<void>
