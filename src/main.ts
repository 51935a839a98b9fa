/**
 * One run of the action: read the inputs, run the command against the service, report.
 */
import { recordChange, sendHeartbeat } from './commands/change.ts'
import type { CommandHandler } from './commands/command.ts'
import { getChange, hello } from './commands/read.ts'
import {
  ACTION_NAME,
  ACTION_VERSION,
  API_KEY_HEADER,
  Inputs,
  type Command,
  type FailOnError
} from './constants.ts'
import type { Env } from './context.ts'
import { REDACTED, Redactor } from './redact.ts'
import { Report } from './report.ts'
import { githubRunner, type Runner } from './runner.ts'
import { ServiceClient, type DryRunPrinter } from './service/client.ts'
import { Transport } from './service/transport.ts'
import { parseFailOnError, readSettings } from './settings.ts'

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
  // Until the inputs are read, the failure policy is as given, or `auto` if that input is invalid too.
  let policy: FailOnError = fallbackPolicy(runner)
  let jobSummary = true

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
    try {
      await COMMAND_HANDLERS[settings.command]({ settings, client, report, env })
    } finally {
      transport.close()
    }
    if (settings.dryRun) report.info('Dry run: nothing was sent.')
    await report.finish({ policy, jobSummary })
  } catch (error) {
    await report.finish({ error, policy, jobSummary })
  }
}

function fallbackPolicy(runner: Runner): FailOnError {
  try {
    return parseFailOnError(runner.getInput(Inputs.FailOnError))
  } catch {
    return 'auto'
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
