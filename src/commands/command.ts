import type { Env } from '../context.ts'
import type { Report } from '../report.ts'
import type { ServiceClient } from '../service/client.ts'
import type { Settings } from '../action/settings.ts'

/** What every command gets: validated settings, the service, the report and the environment. */
export interface CommandContext {
  settings: Settings
  client: ServiceClient
  report: Report
  env: Env
}

export type CommandHandler = (context: CommandContext) => Promise<void>
