import { Outputs } from '../action/names.ts'
import { readEventPayload } from '../action/payload.ts'
import { buildChangeRequest, type ChangeRequest } from '../change.ts'
import { contextDefaults, type ChangeDefaults, type GithubMetadata } from '../context.ts'
import type { SummaryRow } from '../report.ts'
import { serviceRequests } from '../service/client.ts'
import type { CommandContext } from './command.ts'
import { formatField } from './read.ts'
import { recordServices } from './services.ts'
import {
  findShipped,
  outputShipped,
  printShipped,
  summarizeShipped,
  withShipped
} from './shipped.ts'

/**
 * `change`: look up what the change ships, record the change (one per touched service with the
 * services input), then send the heartbeat, once, when a monitor is named.
 */
export async function recordChange(context: CommandContext): Promise<void> {
  const { settings, report, env } = context
  const payload = readEventPayload(env)
  const gitDefaults = contextDefaults(env['GITHUB_EVENT_NAME'] ?? '', payload, env)
  const shipped = await findShipped(settings, gitDefaults, payload, env, report)
  const environment = settings.change.environment ?? gitDefaults.environment
  const defaults = withShipped(gitDefaults, shipped, environment)
  if (settings.dryRun) printShipped(report, shipped)
  else outputShipped(report, shipped)

  try {
    if (settings.services !== undefined) {
      await recordServices(context, settings.services, defaults, shipped)
    } else {
      await recordOne(context, defaults)
    }
  } finally {
    // What shipped is worth reading even when recording it failed.
    summarizeShipped(report, shipped)
  }
  if (settings.heartbeatId !== undefined) await sendHeartbeat(context)
}

/** One change: the service input's, or the repository's. */
async function recordOne(context: CommandContext, defaults: ChangeDefaults): Promise<void> {
  const { settings, client, report } = context
  const change = buildChangeRequest(settings.change, defaults, settings.githubMetadata)
  let changeId: string | undefined
  if (settings.dryRun) {
    context.printRequest(serviceRequests.createChange(change))
    report.setTitle('Change not sent (dry run)')
  } else {
    changeId = await client.createChange(change)
    // Set at once: the change exists even if the heartbeat below fails.
    report.output(Outputs.ChangeId, changeId)
    report.notice(`Recorded change ${changeId}: ${change.description}`)
    report.setTitle('Change recorded')
  }
  report.table('Change', changeRows(change, changeId, defaults.github))
}

/** Every field that was sent, and the link to the run. */
export function changeRows(
  change: ChangeRequest,
  changeId: string | undefined,
  github: GithubMetadata
): SummaryRow[] {
  const { run_url: runUrl, compare_url: compareUrl } = github as GithubMetadata & {
    compare_url?: string
  }
  return [
    ['Id', changeId],
    ['Service', change.service],
    ['Version', change.version],
    ['Environment', change.environment],
    ['User', change.user],
    ['Team', change.team],
    ['Description', change.description],
    ['Comment', change.comment],
    ['Labels', change.labels],
    ['Created at', formatField('created_at', change.created_at)],
    ['Run', runUrl && { text: runUrl, url: runUrl }],
    ['Compare', compareUrl && { text: compareUrl, url: compareUrl }]
  ]
}

/** `heartbeat`: one signal to the monitor named by heartbeat-id. */
export async function sendHeartbeat(context: CommandContext): Promise<void> {
  const { settings, client, report } = context
  const monitorId = settings.heartbeatId ?? ''
  if (settings.dryRun) {
    context.printRequest(serviceRequests.sendHeartbeat(monitorId))
    report.table('Heartbeat (dry run, not sent)', [['Monitor', monitorId]])
    return
  }
  const signalId = await client.sendHeartbeat(monitorId)
  report.output(Outputs.HeartbeatSignalId, signalId)
  report.info(`Heartbeat ${monitorId} received as signal ${signalId}.`)
  if (settings.command === 'heartbeat') report.setTitle('Heartbeat received')
  report.table('Heartbeat', [
    ['Monitor', monitorId],
    ['Signal id', signalId]
  ])
}
