/**
 * `record-at: job-end`, the main step, placed before the deploy: it checks the inputs and the key
 * and saves its start. The post step, after the job's steps whatever their outcome, runs the
 * command with how the deploy ended.
 */
import type { CommandContext } from '../commands/command.ts'
import { Inputs } from '../settings.ts'
import { JOB_END_STATE, jobEndStateText } from './post-state.ts'

/**
 * The key is checked, then the start (and the job's environment) is saved for the post step.
 * Nothing is recorded and no output is set. A failure here is the caller's to defer (see Report.deferFailure).
 */
export async function prepareJobEnd(
  context: CommandContext,
  saveState: (name: string, value: string) => void,
  started: { at: number; jobEnvironment?: string }
): Promise<void> {
  const { settings, client, report } = context
  await client.hello()
  saveState(JOB_END_STATE, jobEndStateText(started.at, started.jobEnvironment))
  const what =
    settings.command === 'heartbeat'
      ? 'The heartbeat will be sent when the job ends, if it succeeds'
      : 'The change will be recorded when the job ends, with how the deploy ended'
  report.info(`${what} (${Inputs.RecordAt}: job-end).`)
}
