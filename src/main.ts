/**
 * One run of the action: read the inputs, run the command against the service, report.
 */
import { recordChange, sendHeartbeat } from './commands/change.ts'
import type { CommandHandler } from './commands/command.ts'
import { getChange, hello } from './commands/read.ts'
import { ACTION_NAME, ACTION_VERSION, Inputs, type Command, type FailOnError } from './action/names.ts'
import type { Env } from './context.ts'
import { errorMessage } from './errors.ts'
import { REDACTED, Redactor } from './redact.ts'
import { Report } from './report.ts'
import { githubRunner, type Runner } from './action/runner.ts'
import { ServiceClient, type DryRunPrinter } from './service/client.ts'
import { API_KEY_HEADER, Transport, type ServiceRequest } from './service/transport.ts'
import { parseBoolean, parseFailOnError, readSettings } from './action/settings.ts'

const COMMAND_HANDLERS: Record<Command, CommandHandler> = {
  change: recordChange,
  heartbeat: sendHeartbeat,
  // Loaded only for these commands: reading event files brings in fs/promises, which a plain
  // `change` run should not pay for at start-up.
  events: async context => (await import('./commands/events.ts')).sendEvents(context),
  'event-results': async context => (await import('./commands/events.ts')).getEventResults(context),
  'get-change': getChange,
  hello
}

/** A dry run prints at most this much of a request body. */
const DRY_RUN_BODY_CHARS = 4000

export async function run(runner: Runner = githubRunner, env: Env = process.env): Promise<void> {
  // Mask the key before anything else can print it.
  const redactor = new Redactor()
  const apiKey = runner.getInput(Inputs.ApiKey)
  if (apiKey) {
    runner.setSecret(apiKey)
    redactor.add(apiKey)
  }
  const report = new Report(runner, redactor)
  const outcome = await execute(runner, env, redactor, report)
  try {
    await report.finish(outcome)
  } catch (error) {
    // Reporting itself failed (an output file that cannot be written, say): still say why.
    runner.setFailed(
      redactor.redact(`The action could not report its result: ${errorMessage(error)}`)
    )
  }
}

/** Reads the settings and runs the command; any error is returned for the failure policy. */
async function execute(
  runner: Runner,
  env: Env,
  redactor: Redactor,
  report: Report
): Promise<{ error?: unknown; policy: FailOnError; jobSummary: boolean }> {
  // Until every input is read, these two are taken as given, or as their defaults if invalid.
  let policy = bestEffort(() => parseFailOnError(runner.getInput(Inputs.FailOnError)), 'auto')
  let jobSummary = bestEffort(
    () => parseBoolean(Inputs.JobSummary, runner.getInput(Inputs.JobSummary) || 'true'),
    true
  )
  try {
    const settings = readSettings(name => runner.getInput(name))
    policy = settings.failOnError
    jobSummary = settings.jobSummary

    const transport = new Transport({
      baseUrl: settings.baseUrl,
      apiKey: settings.apiKey,
      timeoutMs: settings.timeoutSeconds * 1000,
      maxAttempts: settings.maxAttempts,
      userAgent: `${ACTION_NAME}/${ACTION_VERSION}`,
      redactor,
      log: message => report.info(message)
    })
    const printer = settings.dryRun ? dryRunPrinter(report) : undefined
    const client = new ServiceClient(transport, redactor, printer)
    const printRequest = (request: ServiceRequest): void =>
      dryRunPrinter(report)(request, transport.url(request))
    try {
      await COMMAND_HANDLERS[settings.command]({ settings, client, report, env, printRequest })
    } finally {
      transport.close()
    }
    if (settings.dryRun) report.info('Dry run: nothing was sent.')
    return { policy, jobSummary }
  } catch (error) {
    return { error, policy, jobSummary }
  }
}

function bestEffort<T>(read: () => T, fallback: T): T {
  try {
    return read()
  } catch {
    return fallback
  }
}

function dryRunPrinter(report: Report): DryRunPrinter {
  return (request, url) => {
    const lines = [`[dry-run] ${request.method} ${url.href}`, `  ${API_KEY_HEADER}: ${REDACTED}`]
    if (request.contentType) lines.push(`  Content-Type: ${request.contentType}`)
    if (request.body !== undefined) {
      const body =
        typeof request.body === 'string' ? request.body : Buffer.from(request.body).toString()
      const shown =
        body.length > DRY_RUN_BODY_CHARS
          ? `${body.slice(0, DRY_RUN_BODY_CHARS)}… (${Buffer.byteLength(body)} bytes in all)`
          : body
      lines.push(`  ${shown.trimEnd().replace(/\n/g, '\n  ')}`)
    }
    report.info(lines.join('\n'))
  }
}
