/**
 * A command run as the core's step runs it, for the commands' own tests, which go through no
 * door: the settings read from plain inputs, the run as a test writes it, a report over a Recorder
 * in TEST_WORDS, and the service through its real client (in a dry run, the printout instead).
 */
import type { RunDefaults } from '../../src/change.ts'
import type { CommandContext } from '../../src/commands/command.ts'
import type { Ruling } from '../../src/policy.ts'
import { Redactor } from '../../src/redact.ts'
import { Report, type CommandResult, type StepOutcome } from '../../src/report.ts'
import { ServiceClient, type CallHints, type ChangeService } from '../../src/service/client.ts'
import { DryRunClient } from '../../src/service/dry-run-client.ts'
import { Transport } from '../../src/service/transport.ts'
import { momentOf } from '../../src/step.ts'
import { readSettings } from '../../src/values/read-settings.ts'
import { Recorder, TEST_WORDS } from './recorder.ts'

/** When a test's change is recorded: a fixed clock, so that no test depends on when it runs. */
export const NOW = Date.parse('2026-11-23T12:00:00Z')

/** What a test gives a context besides its inputs and its run. */
export interface ContextOptions {
  deploy?: CommandContext['deploy']
  lookup?: CommandContext['lookup']
  /** The advice a door adds to a failed call, by endpoint and status. */
  hints?: CallHints
  /** A service of the test's own, instead of the client over the transport. */
  client?: ChangeService
}

/** What the command answered or threw, with the context it ran in and what its report said. */
export interface CommandRun<T extends CommandResult> extends StepOutcome {
  result?: T
  context: CommandContext
  recorder: Recorder
}

/**
 * Runs `command` with a context built from `inputs` (each setting by name; absent is not given)
 * and `run`. Its error, answered or thrown, is the outcome's; the service's connections are
 * closed once it is done.
 */
export async function runCommandWith<T extends CommandResult>(
  inputs: Readonly<Record<string, string>>,
  run: RunDefaults,
  command: (context: CommandContext) => Promise<T>,
  options: ContextOptions = {}
): Promise<CommandRun<T>> {
  const settings = readSettings(name => inputs[name] ?? '', { now: NOW })
  const recorder = new Recorder()
  const redactor = new Redactor()
  const report = new Report(recorder, redactor, TEST_WORDS, settings.dryRun)
  const transport =
    settings.dryRun || options.client
      ? undefined
      : new Transport({
          baseUrl: settings.baseUrl,
          apiKey: settings.apiKey,
          timeoutMs: settings.timeoutSeconds * 1000,
          maxAttempts: settings.maxAttempts,
          userAgent: 'change-tracking-action-tests',
          redactor,
          advice: TEST_WORDS.advice,
          // A retry goes at once: no test waits on a clock.
          retry: { sleep: () => Promise.resolve() },
          log: message => report.info(message)
        })
  const service = transport && new ServiceClient(transport, options.hints ?? TEST_WORDS.hints)
  const printout = new DryRunClient(settings.baseUrl, (request, url) =>
    report.printRequest(request, url)
  )
  const context: CommandContext = {
    settings,
    run,
    client: options.client ?? service ?? printout,
    report,
    clock: () => NOW,
    deploy: options.deploy,
    lookup: options.lookup
  }
  try {
    const result = await command(context)
    return { result, error: result.error, context, recorder }
  } catch (error) {
    return { error, context, recorder }
  } finally {
    transport?.close()
  }
}

/**
 * What a user reads of a run: its outputs, its error as the failure policy rules it at the
 * command's moment, and the summary, all in the recorder.
 */
export function finish({ result, error, context }: CommandRun<CommandResult>): Promise<Ruling[]> {
  const { settings, report } = context
  const moment = momentOf(settings.command)
  return report.finish(
    { result, error },
    { moment, policy: settings.failOnError, jobSummary: settings.jobSummary }
  )
}
