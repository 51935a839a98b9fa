import { Outputs } from '../action/names.ts'
import { buildChangeRequest, type ChangeDefaults } from '../change.ts'
import { contextDefaults, runUrl } from '../context.ts'
import { withDeploy } from '../deploy.ts'
import { answer, type SummaryRow } from '../report.ts'
import type { ChangeRequest } from '../service/client.ts'
import type { Shipped } from '../shipped/types.ts'
import type { CommandContext } from './command.ts'
import { formatField } from './read.ts'
import { recordServices } from './services.ts'
import { findShipped, logShipped, outputShipped, summarizeShipped, withShipped } from './shipped.ts'

/**
 * `change`: look up what the change ships, record the change (one per touched service with the
 * services input), then send the heartbeat, once, when a monitor is named.
 */
export async function recordChange(context: CommandContext): Promise<void> {
  const { settings, run, report } = context
  const defaults = contextDefaults(run)
  // The change as far as the run and the user say: what the lookup is about.
  const subject = buildChangeRequest(settings.change, defaults, settings.githubMetadata)
  const shipped = await findShipped(context, subject)
  logShipped(report, shipped)

  try {
    if (settings.services !== undefined) {
      await recordServices(context, settings.services, { defaults, subject, shipped })
    } else {
      const recordedAt = context.clock()
      const shippedDefaults = withShipped(defaults, { shipped, subject, recordedAt })
      await recordOne(context, withDeploy(shippedDefaults, context.deploy), shipped)
    }
  } finally {
    // What shipped is worth reading even when recording it failed.
    summarizeShipped(report, shipped)
  }
  // After the change: an output file that cannot be written must not keep it from being recorded.
  outputShipped(report, shipped)
  // At a job's end, a heartbeat says the job succeeded: none is sent for any other outcome.
  const succeeded = context.deploy === undefined || context.deploy.outcome === 'success'
  if (settings.heartbeatId !== undefined && succeeded) await sendHeartbeat(context)
}

/** One change: the service input's, or the repository's. */
async function recordOne(
  context: CommandContext,
  defaults: ChangeDefaults,
  shipped: Shipped | undefined
): Promise<void> {
  const { settings, run, client, report } = context
  const change = buildChangeRequest(settings.change, defaults, settings.githubMetadata)
  const changeId = await client.createChange(change)
  report.setTitle('Change', 'recorded')
  report.table('Change', changeRows(change, changeId, runUrl(run), shipped?.compareUrl))
  report.notice(answer(`Recorded change ${changeId}: ${change.description}`))
  report.output(Outputs.ChangeId, changeId)
}

/** Every field that was sent, and the links to the run and the compare view. */
export function changeRows(
  change: ChangeRequest,
  changeId: string | undefined,
  runLink: string | undefined,
  compareLink: string | undefined
): SummaryRow[] {
  return [
    ['Id', answer(changeId)],
    ['Service', change.service],
    ['Version', change.version],
    ['Environment', change.environment],
    ['User', change.user],
    ['Team', change.team],
    ['Description', change.description],
    ['Comment', change.comment],
    ['Labels', change.labels],
    ['Created at', formatField('created_at', change.created_at)],
    ['Run', runLink && { text: runLink, url: runLink }],
    ['Compare', compareLink && { text: compareLink, url: compareLink }]
  ]
}

/** `heartbeat`: one signal to the monitor named by heartbeat-id. */
export async function sendHeartbeat({ settings, client, report }: CommandContext): Promise<void> {
  const monitorId = settings.heartbeatId ?? ''
  const signalId = await client.sendHeartbeat(monitorId)
  report.info(answer(`Heartbeat ${monitorId} received as signal ${signalId}.`))
  if (settings.command === 'heartbeat') report.setTitle('Heartbeat', 'received')
  report.table(
    'Heartbeat',
    [
      ['Monitor', monitorId],
      ['Signal id', answer(signalId)]
    ],
    'sent'
  )
  report.output(Outputs.HeartbeatSignalId, signalId)
}
