/**
 * `record-at: job-end`, the main step, placed before the deploy: it checks the inputs and the key
 * and saves its start. The post step, after the job's steps whatever their outcome, runs the
 * command with how the deploy ended.
 */
import type { CommandContext } from '../commands/command.ts'
import { Inputs } from '../settings.ts'

/**
 * The key is checked; the caller then saves the start (and the job's environment) for the post
 * step, unless the failure policy fails the step now. Nothing is recorded and no output is set.
 */
export async function prepareJobEnd(context: CommandContext): Promise<void> {
  const { settings, client, report } = context
  await client.hello()
  const what =
    settings.command === 'heartbeat'
      ? 'The heartbeat will be sent when the job ends, if it succeeds'
      : 'The change will be recorded when the job ends, with how the deploy ended'
  report.info(`${what} (${Inputs.RecordAt}: job-end).`)
}
