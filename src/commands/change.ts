import { buildChangeRequest } from '../change.ts'
import { Outputs } from '../action/names.ts'
import { contextDefaults, readEventPayload } from '../context.ts'
import type { CommandContext } from './command.ts'

/** `change`: record the change, then send the heartbeat when a monitor is named. */
export async function recordChange(context: CommandContext): Promise<void> {
  const { settings, client, report, env } = context
  const defaults = contextDefaults(env['GITHUB_EVENT_NAME'] ?? '', readEventPayload(env), env)
  const change = buildChangeRequest(settings.change, defaults, settings.githubMetadata)

  const changeId = await client.createChange(change)
  // Set at once: the change exists even if the heartbeat below fails.
  if (changeId !== undefined) {
    report.output(Outputs.ChangeId, changeId)
    report.notice(`Recorded change ${changeId}: ${change.description}`)
  }
  report.table(changeId === undefined ? 'Change (dry run, not sent)' : 'Change recorded', [
    ['Id', changeId],
    ['Service', change.service],
    ['Version', change.version],
    ['Environment', change.environment],
    ['User', change.user],
    ['Description', change.description],
    ['Labels', change.labels]
  ])

  if (settings.heartbeatId !== undefined) await sendHeartbeat(context)
}

/** `heartbeat`: one signal to the monitor named by heartbeat-id. */
export async function sendHeartbeat({ settings, client, report }: CommandContext): Promise<void> {
  const monitorId = settings.heartbeatId ?? ''
  const signalId = await client.sendHeartbeat(monitorId)
  if (signalId !== undefined) {
    report.output(Outputs.HeartbeatSignalId, signalId)
    report.info(`Heartbeat ${monitorId} received as signal ${signalId}.`)
  }
  report.table(signalId === undefined ? 'Heartbeat (dry run, not sent)' : 'Heartbeat received', [
    ['Monitor', monitorId],
    ['Signal id', signalId]
  ])
}
