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
import { answer, formatField, type Cell, type Section, type SummaryRow } from '../summary.ts'
import type { ChangeRequest } from '../service/client.ts'
import { Inputs, Outputs, type Settings } from '../settings.ts'
import type { Shipped } from '../shipped/types.ts'
import type { CommandResult } from '../report.ts'
import type { CommandContext, Recorded } from './command.ts'
import { findTriage, logTriage, triageRows } from './triage.ts'
import { findShipped, logShipped, shippedOutputs, shippedSections } from './shipped.ts'

/** Without a version and a service a change says nothing of what shipped: none is sent. */
export function requireSubject(settings: Settings, run: RunDefaults): void {
  const unknown = " is unknown: nothing in the run's context gives it here; set it."
  if (!changeSubject(settings.change, run).version) throw new InputError(Inputs.Version, unknown)
  if (!settings.services && !(settings.change.service ?? run.service))
    throw new InputError(Inputs.Service, unknown)
}

export async function recordChange(context: CommandContext): Promise<CommandResult> {
  const { settings, run, report, deploy } = context
  const opening = deploy && deployOpening(deploy)
  const deployed: Section[] = opening ? [{ lead: 'Deploy', rows: opening.rows }] : []
  if (run.deletedRef && settings.change.version === undefined) {
    const why = 'No change recorded: this push deleted a branch or tag, so nothing was deployed.'
    report.notice(why)
    const title = { opening: opening?.title, done: { subject: 'No change recorded' } }
    return { title, sections: [...deployed, { note: why }], outputs: {} }
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
  const lead: Section = {
    lead: 'Triage',
    rows: [
      ...(opening?.rows ?? []),
      ['Outcome', eventOutcome ? `${eventOutcome.outcome} (${eventOutcome.status})` : undefined],
      ...triageRows(triage, run.links)
    ]
  }
  const basis: ChangeBasis = { run, shipped, deploy, recordedAt: context.clock(), triage }
  // Once, whatever the number of services: every change keeps the outcome the action knows.
  const overruled = overruledOutcome(settings.change, basis)
  if (overruled !== undefined) report.warning(overruled)
  // Loaded only for the services input: glob matching is not every run's cost at start-up.
  const recorded =
    settings.services === undefined
      ? await recordOne(context, basis)
      : await (await import('./services.ts')).recordServices(context, basis)
  // One CDEvent per change recorded (NDJSON), or none when a change has none, said with why.
  const events = recorded.changes.map(({ request, id }) =>
    cdEvent(request, id, basis, settings.change.artifact)
  )
  const none = events.find(event => 'none' in event)
  if (run.cdevent && none) report.info(`No CDEvent: ${none.none}.`)
  const cdevents = events.map(event => JSON.stringify('event' in event && event.event))
  const outputs = {
    ...recorded.outputs,
    ...(run.cdevent && events.length > 0 && { [Outputs.Cdevent]: none ? [] : cdevents }),
    // What shipped is set once the change is recorded.
    ...(recorded.error === undefined && shippedOutputs(shipped))
  }
  const result: CommandResult = {
    ...recorded,
    title: { ...recorded.title, opening: opening?.title },
    // What shipped is worth reading even when recording failed.
    sections: [lead, ...recorded.sections, ...shippedSections(shipped, run.links)],
    outputs
  }
  if (settings.heartbeatId === undefined) return result
  const heartbeat =
    recorded.error === undefined
      ? await sendHeartbeat(context)
      : skipHeartbeat(context, 'recording failed, so it was not attempted')
  return withHeartbeat(result, heartbeat)
}

/** One change: the service input's, or the repository's. */
async function recordOne(
  { settings, run, report, client }: CommandContext,
  basis: ChangeBasis
): Promise<Recorded> {
  const change = buildChangeRequest(settings.change, basis, settings)
  const links = { run: run.runLink, compare: compareLink(basis.shipped, change.version) }
  try {
    const id = await client.createChange(change)
    report.notice(answer(`Recorded change ${id}: ${change.description}`))
    return {
      title: { done: { subject: 'Change', outcome: 'recorded' } },
      sections: [{ table: 'Change', rows: changeRows(change, id, links) }],
      outputs: { [Outputs.ChangeId]: id },
      changes: [{ request: change, id }]
    }
  } catch (error) {
    // What would have been recorded, for whoever records it by hand.
    return {
      title: { notDone: { what: 'Change not recorded', error } },
      sections: [{ table: 'Change not recorded', rows: changeRows(change, undefined, links) }],
      outputs: {},
      changes: [],
      error
    }
  }
}

/**
 * How the deploy ended, first in the summary: the title opens with it ("Deploy failed after
 * 9 s"); the rows of the lead table give the outcome, the start and the duration.
 */
function deployOpening(deploy: DeployRecord): { title: string; rows: SummaryRow[] } {
  const seconds = durationSeconds(deploy)
  const duration = seconds === undefined ? undefined : formatDuration(seconds)
  return {
    title: `Deploy ${OUTCOME_WORDS[deploy.outcome]}${duration === undefined ? '' : ` after ${duration}`}`,
    rows: [
      ['Outcome', deploy.outcome],
      ['Started at', deploy.startedAt && new Date(deploy.startedAt).toISOString()],
      ['Duration', duration]
    ]
  }
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

/** A change's result with its heartbeat's after it: the first thing not done keeps the title. */
function withHeartbeat(change: CommandResult, heartbeat: CommandResult): CommandResult {
  return {
    title: { ...change.title, notDone: change.title.notDone ?? heartbeat.title.notDone },
    sections: [...change.sections, ...heartbeat.sections],
    outputs: { ...change.outputs, ...heartbeat.outputs },
    error: change.error ?? heartbeat.error
  }
}

/** A heartbeat not sent, and why, in the log and the summary. */
function skipHeartbeat({ report }: CommandContext, why: string): CommandResult {
  const text = `Heartbeat not sent: ${why}.`
  report.info(text)
  return { title: {}, sections: [{ note: text }], outputs: {} }
}

/**
 * `heartbeat`: one signal to the monitor named by heartbeat-id. At a job's end a heartbeat says
 * that the job succeeded, so none is sent for any other outcome.
 */
export async function sendHeartbeat(context: CommandContext): Promise<CommandResult> {
  const { settings, client, report, deploy } = context
  const alone = settings.command === 'heartbeat'
  const opening = alone && deploy !== undefined ? deployOpening(deploy) : undefined
  const lead: Section[] = opening ? [{ lead: 'Deploy', rows: opening.rows }] : []
  if (deploy !== undefined && deploy.outcome !== 'success') {
    const skipped = skipHeartbeat(context, `the deploy ended with ${deploy.outcome}`)
    const done = alone ? { subject: 'Heartbeat not sent' } : undefined
    const title = { opening: opening?.title, done }
    return { ...skipped, title, sections: [...lead, ...skipped.sections] }
  }
  const monitorId = settings.heartbeatId ?? ''
  try {
    const signalId = await client.sendHeartbeat(monitorId)
    report.info(answer(`Heartbeat ${monitorId} received as signal ${signalId}.`))
    const rows: SummaryRow[] = [
      ['Monitor', monitorId],
      ['Signal id', answer(signalId)]
    ]
    const done = alone ? ({ subject: 'Heartbeat', outcome: 'received' } as const) : undefined
    return {
      title: { opening: opening?.title, done },
      sections: [...lead, { table: 'Heartbeat', rows, outcome: 'sent' }],
      outputs: { [Outputs.HeartbeatSignalId]: signalId }
    }
  } catch (error) {
    return {
      title: { opening: opening?.title, notDone: { what: 'Heartbeat not sent', error } },
      sections: lead,
      outputs: {},
      error
    }
  }
}
