import type { Settings } from '../action/settings.ts'
import type { Env } from '../context.ts'
import type { Report } from '../report.ts'
import type { ServiceClient } from '../service/client.ts'
import type { ServiceRequest } from '../service/request.ts'

/** What every command gets: validated settings, the service, the report and the environment. */
export interface CommandContext {
  settings: Settings
  client: ServiceClient
  report: Report
  env: Env
  /**
   * Dry run: prints a request instead of sending it (the key masked). Commands call it, rather
   * than the client, when settings.dryRun is true.
   */
  printRequest: (request: ServiceRequest) => void
}

export type CommandHandler = (context: CommandContext) => Promise<void>
