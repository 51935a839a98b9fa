/**
 * `change` and `heartbeat`. A change: look up what it ships, record it (one per touched service
 * with the services input), then send the heartbeat when a monitor is named. At a job's end the
 * same commands run in the post step, with how the deploy ended.
 */
import { Outputs } from '../action/names.ts'
import { buildChangeRequest, changeSubject, type ChangeBasis } from '../change.ts'
import { contextDefaults, runUrl } from '../context.ts'
import { durationSeconds, formatDuration } from '../deploy.ts'
import { answer, formatField, type SummaryRow } from '../report.ts'
import type { ChangeRequest } from '../service/client.ts'
import type { CommandContext } from './command.ts'
import { findTriage, logTriage } from './triage.ts'
import { findShipped, logShipped, outputShipped, summarizeShipped } from './shipped.ts'

export async function recordChange(context: CommandContext): Promise<void> {
  const { settings, run, report, deploy } = context
  const defaults = contextDefaults(run)
  if (defaults.deletedRef && settings.change.version === undefined) {
    const why = 'No change recorded: this push deleted a branch or tag, so nothing was deployed.'
    report.setTitle('No change recorded')
    report.notice(why)
    report.note(why)
    return
  }
  const shipped = await findShipped(context, changeSubject(settings.change, defaults))
  logShipped(report, shipped)
  const triage = await findTriage(context, defaults, shipped)
  logTriage(report, triage)
  const basis: ChangeBasis = {
    run: defaults,
    shipped,
    deploy,
    recordedAt: context.clock(),
    triage
  }
  try {
    // Loaded only for the services input: glob matching is not every run's cost at start-up.
    if (settings.services === undefined) await recordOne(context, basis)
    else await (await import('./services.ts')).recordServices(context, settings.services, basis)
  } finally {
    // What shipped and how the deploy ended are worth reading even when recording failed.
    summarizeShipped(report, shipped)
    if (deploy !== undefined) {
      const seconds = durationSeconds(deploy)
      report.table('Deploy', [
        ['Outcome', deploy.outcome],
        ['Started at', deploy.startedAt && new Date(deploy.startedAt).toISOString()],
        ['Duration', seconds === undefined ? undefined : formatDuration(seconds)]
      ])
    }
  }
  // After the change: an output file that cannot be written must not keep it from being recorded.
  outputShipped(report, shipped)
  if (settings.heartbeatId !== undefined) await sendHeartbeat(context)
}

/** One change: the service input's, or the repository's. */
async function recordOne(context: CommandContext, basis: ChangeBasis): Promise<void> {
  const { settings, run, client, report } = context
  const change = buildChangeRequest(settings.change, basis, {
    githubMetadata: settings.githubMetadata,
    autoLabels: settings.triage.autoLabels
  })
  const changeId = await client.createChange(change)
  report.setTitle('Change', 'recorded')
  report.table('Change', changeRows(change, changeId, runUrl(run), basis.shipped?.compareUrl))
  report.notice(answer(`Recorded change ${changeId}: ${change.description}`))
  report.output(Outputs.ChangeId, changeId)
}

/** Every field that was sent, and the links to the run and the compare view. */
function changeRows(
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

/**
 * `heartbeat`: one signal to the monitor named by heartbeat-id. At a job's end a heartbeat says
 * that the job succeeded, so none is sent for any other outcome.
 */
export async function sendHeartbeat({
  settings,
  client,
  report,
  deploy
}: CommandContext): Promise<void> {
  if (deploy !== undefined && deploy.outcome !== 'success') {
    report.info(`No heartbeat sent: the job ended with ${deploy.outcome}.`)
    return
  }
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
