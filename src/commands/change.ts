/**
 * `change` and `heartbeat`. A change: look up what it ships, record it (one per touched service
 * with the services input), then send the heartbeat when a monitor is named. At a job's end the
 * same commands run in the post step, with how the deploy ended.
 */
import {
  buildChangeRequest,
  changeSubject,
  overruledOutcome,
  type ChangeBasis,
  type RunDefaults
} from '../change.ts'
import { cdEvent } from '../cdevent.ts'
import { InputError } from '../errors.ts'
import { durationSeconds, formatDuration, OUTCOME_WORDS, type DeployRecord } from '../deploy.ts'
import { shortSha } from '../describe.ts'
import type { Report } from '../report.ts'
import { answer, formatField, type Cell, type SummaryRow } from '../summary.ts'
import type { ChangeRequest, ChangeService } from '../service/client.ts'
import { Inputs, Outputs, type Settings } from '../settings.ts'
import type { Shipped } from '../shipped/types.ts'
import type { CommandContext } from './command.ts'
import { findTriage, logTriage, triageRows } from './triage.ts'
import { findShipped, logShipped, outputShipped, summarizeShipped } from './shipped.ts'

/** Without a version and a service a change says nothing of what shipped: none is sent. */
export function requireSubject(settings: Settings, run: RunDefaults): void {
  const unknown = " is unknown: nothing in the run's context gives it here; set it."
  if (!changeSubject(settings.change, run).version) throw new InputError(Inputs.Version, unknown)
  if (!settings.services && !(settings.change.service ?? run.service))
    throw new InputError(Inputs.Service, unknown)
}

export async function recordChange(context: CommandContext): Promise<void> {
  const { settings, run, report, deploy } = context
  const deployed = deploy === undefined ? [] : openWithDeploy(report, deploy)
  if (run.deletedRef && settings.change.version === undefined) {
    report.summary.lead('Deploy', deployed)
    const why = 'No change recorded: this push deleted a branch or tag, so nothing was deployed.'
    report.summary.setTitle('No change recorded')
    report.notice(why)
    report.summary.note(why)
    return
  }
  requireSubject(settings, run)
  if (settings.change.artifact?.reference && !settings.change.artifact.digest)
    report.warning(
      `The artifact ${settings.change.artifact.reference} has no digest: a tag can move, only a digest pins an image, so it has no purl.`
    )
  const shipped = await findShipped(context, changeSubject(settings.change, run))
  logShipped(report, shipped)
  const triage = findTriage(context, shipped)
  logTriage(report, triage)
  // First under the title: how it ended, then what an on-call engineer filters on.
  const eventOutcome = deploy === undefined && run.outcome
  report.summary.lead('Triage', [
    ...deployed,
    ['Outcome', eventOutcome ? `${eventOutcome.outcome} (${eventOutcome.status})` : undefined],
    ...triageRows(triage, run.links)
  ])
  const basis: ChangeBasis = { run, shipped, deploy, recordedAt: context.clock(), triage }
  // Once, whatever the number of services: every change keeps the outcome the action knows.
  const overruled = overruledOutcome(settings.change, basis)
  if (overruled !== undefined) report.warning(overruled)
  let recorded = false
  // Each change the service accepted, as a CDEvent or why it has none.
  const made: Array<ReturnType<typeof cdEvent>> = []
  const send = (change: ChangeRequest) =>
    context.client.createChange(change).then(id => {
      made.push(cdEvent(change, settings.dryRun ? undefined : id, basis, settings.change.artifact))
      return id
    })
  try {
    // Loaded only for the services input: glob matching is not every run's cost at start-up.
    if (settings.services === undefined) await recordOne(context, basis, send)
    else await (await import('./services.ts')).recordServices(context, basis, send)
    recorded = true
  } finally {
    // One CDEvent per change (NDJSON), or none when a change has none, said in one line with why.
    const none = made.find(result => 'none' in result)
    if (run.cdevent && none) report.info(`No CDEvent: ${none.none}.`)
    const lines = made.map(result => JSON.stringify('event' in result && result.event))
    if (run.cdevent && made.length > 0) report.outputLines(Outputs.Cdevent, none ? [] : lines)
    // What shipped is worth reading even when recording failed.
    summarizeShipped(report, shipped, run.links)
    if (!recorded && settings.heartbeatId !== undefined) {
      skipHeartbeat(report, 'recording failed, so it was not attempted')
    }
  }
  // After the change: an output file that cannot be written must not keep it from being recorded.
  outputShipped(report, shipped)
  if (settings.heartbeatId !== undefined) await sendHeartbeat(context)
}

/** One change: the service input's, or the repository's. */
async function recordOne(
  { settings, run, report }: CommandContext,
  basis: ChangeBasis,
  send: ChangeService['createChange']
): Promise<void> {
  const change = buildChangeRequest(settings.change, basis, settings)
  const links = { run: run.runLink, compare: compareLink(basis.shipped, change.version) }
  const changeId = await send(change).catch((error: unknown) => {
    // What would have been recorded, for whoever records it by hand.
    report.summary.notDone('Change not recorded', error)
    report.summary.table('Change not recorded', changeRows(change, undefined, links))
    throw error
  })
  report.summary.setTitle('Change', 'recorded')
  report.summary.table('Change', changeRows(change, changeId, links))
  report.notice(answer(`Recorded change ${changeId}: ${change.description}`))
  report.output(Outputs.ChangeId, changeId)
}

/**
 * How the deploy ended, first in the summary: the title opens with it ("Deploy failed after
 * 9 s"); the rows of the lead table give the outcome, the start and the duration.
 */
function openWithDeploy(report: Report, deploy: DeployRecord): SummaryRow[] {
  const seconds = durationSeconds(deploy)
  const duration = seconds === undefined ? undefined : formatDuration(seconds)
  report.summary.openTitleWith(
    `Deploy ${OUTCOME_WORDS[deploy.outcome]}${duration === undefined ? '' : ` after ${duration}`}`
  )
  return [
    ['Outcome', deploy.outcome],
    ['Started at', deploy.startedAt && new Date(deploy.startedAt).toISOString()],
    ['Duration', duration]
  ]
}

/** The compare view, linked by its two ends ("9f8e7d6…a1b2c3d"), not by its long URL. */
function compareLink(shipped: Shipped | undefined, version: string | undefined): Cell {
  const url = shipped?.compareUrl
  if (url === undefined) return undefined
  const ends = shipped?.previousSha && version && [shipped.previousSha, version].map(shortSha)
  return { text: ends ? ends.join('…') : 'compare', url }
}

/** Every field that was sent, and the links to the run and the compare view. */
function changeRows(
  change: ChangeRequest,
  changeId: string | undefined,
  links: { run: Cell; compare: Cell }
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
    ['Run', links.run],
    ['Compare', links.compare]
  ]
}

/** A heartbeat not sent, and why, in the log and the summary. */
function skipHeartbeat(report: Report, why: string): void {
  const text = `Heartbeat not sent: ${why}.`
  report.info(text)
  report.summary.note(text)
}

/**
 * `heartbeat`: one signal to the monitor named by heartbeat-id. At a job's end a heartbeat says
 * that the job succeeded, so none is sent for any other outcome.
 */
export async function sendHeartbeat(context: CommandContext): Promise<void> {
  const { settings, client, report, deploy } = context
  const alone = settings.command === 'heartbeat'
  if (alone && deploy !== undefined) report.summary.lead('Deploy', openWithDeploy(report, deploy))
  if (deploy !== undefined && deploy.outcome !== 'success') {
    if (alone) report.summary.setTitle('Heartbeat not sent')
    skipHeartbeat(report, `the deploy ended with ${deploy.outcome}`)
    return
  }
  const monitorId = settings.heartbeatId ?? ''
  const signalId = await client.sendHeartbeat(monitorId).catch((error: unknown) => {
    report.summary.notDone('Heartbeat not sent', error)
    throw error
  })
  report.info(answer(`Heartbeat ${monitorId} received as signal ${signalId}.`))
  if (alone) report.summary.setTitle('Heartbeat', 'received')
  report.summary.table(
    'Heartbeat',
    [
      ['Monitor', monitorId],
      ['Signal id', answer(signalId)]
    ],
    'sent'
  )
  report.output(Outputs.HeartbeatSignalId, signalId)
}
