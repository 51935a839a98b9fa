/**
 * `record-at: job-end`: the main step, placed before the deploy, checks the inputs and the key
 * and saves its start; the post step, after the job's steps whatever their outcome, records the
 * change (or sends the heartbeat) with how the deploy ended.
 */
import { Inputs } from '../action/names.ts'
import { JOB_END_STATE, jobEndStateText } from '../action/post-state.ts'
import { durationSeconds, formatDuration, type DeployRecord } from '../deploy.ts'
import { errorMessage, failureKind } from '../errors.ts'
import { shouldFail } from '../report.ts'
import { endSentence } from '../text.ts'
import { recordChange, sendHeartbeat } from './change.ts'
import type { CommandContext } from './command.ts'

/**
 * The main step: the key is checked (a rejected key fails before the deploy; an outage only
 * warns), then the start is saved for the post step. Nothing is recorded and no output is set.
 */
export async function prepareJobEnd(
  context: CommandContext,
  saveState: (name: string, value: string) => void,
  startedAt: number
): Promise<void> {
  const { settings, client, report } = context
  try {
    await client.hello()
  } catch (error) {
    if (shouldFail(failureKind(error), settings.failOnError)) throw error
    report.warning(
      `${endSentence(errorMessage(error))} The deploy goes on: the post step will still try to record when the job ends.`
    )
  }
  saveState(JOB_END_STATE, jobEndStateText({ startedAt }))
  const what =
    settings.command === 'heartbeat'
      ? 'The heartbeat will be sent when the job ends, if it succeeds'
      : 'The change will be recorded when the job ends, with how the deploy ended'
  report.info(`${what} (${Inputs.RecordAt}: job-end).`)
  if (settings.dryRun) {
    report.info('Dry run: the post step will print the request it would send, and send nothing.')
  }
}

/** The post step: the change, or the heartbeat when the job succeeded, then the deploy's table. */
export async function recordJobEnd(
  context: CommandContext & { deploy: DeployRecord }
): Promise<void> {
  const { settings, report, deploy } = context
  if (settings.command === 'heartbeat') {
    if (deploy.outcome === 'success') await sendHeartbeat(context)
    else report.info(`No heartbeat sent: the job ended with ${deploy.outcome}.`)
    return
  }
  try {
    await recordChange(context)
  } finally {
    report.table('Deploy', [
      ['Outcome', deploy.outcome],
      ['Started at', new Date(deploy.startedAt).toISOString()],
      ['Duration', formatDuration(durationSeconds(deploy))]
    ])
  }
}
