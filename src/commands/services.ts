/**
 * `change` with the services input: one change per service the deploy touched, a few in flight
 * at once. Every change that was recorded is output, even when another one failed.
 */
import { matcherOf, SERVICE_SELECTION_BUDGET_MS, selectServices } from '../services/selection.ts'
import { buildChangeRequest, type ChangeBasis } from '../change.ts'
import { errorMessage, failureKind, ServiceError } from '../errors.ts'
import { runAll, MAX_CHANGES_IN_FLIGHT } from '../helpers/send-all.ts'
import { answer } from '../summary.ts'
import { ENDPOINT_CALLS } from '../service/client.ts'
import { Outputs } from '../settings.ts'
import type { Section } from '../summary.ts'
import { plural } from '../helpers/text.ts'
import { runWithin } from '../helpers/time-bound.ts'
import type { CommandContext, Recorded } from './command.ts'
import { changedFiles } from './shipped.ts'
import { findTriage, logTriage, serviceShipped } from './triage.ts'

/** Records the touched services' changes; the error names every one not recorded. */
export async function recordServices(
  context: CommandContext,
  basis: ChangeBasis
): Promise<Recorded> {
  const { settings, report, client } = context
  const specs = settings.services ?? []
  const selection = selectServices(specs, changedFiles(settings.includeCommits, basis.shipped))
  const { allRecordedBecause } = selection
  if (allRecordedBecause) report.notice(allRecordedBecause)
  for (const { name, reason, matchedPaths } of selection.decisions) {
    report.info(`${name}: ${reason}${matchedPaths.length ? ` (${matchedPaths.join(', ')})` : ''}`)
  }
  const recorded = selection.decisions.filter(decision => decision.recorded)
  // Each service's own triage: a documentation service never carries another's migration. Its
  // patterns are matched again, within the selection's bound; past it, the deploy's triage.
  const { shipped } = basis
  const owned = runWithin(SERVICE_SELECTION_BUDGET_MS, () =>
    recorded.map(({ name }) => {
      const spec = specs.find(each => each.name === name && each.patterns.length)
      return spec && shipped && !allRecordedBecause && serviceShipped(shipped, matcherOf(spec))
    })
  )
  const changes = recorded.map(({ name, matchedPaths, matchedCount }, index) => {
    const own = owned.finished && owned.value[index]
    const triage = own ? findTriage(context, own) : basis.triage
    if (triage && own) logTriage(report, triage, name)
    const service = {
      name,
      ...(allRecordedBecause === undefined && {
        matchingFiles: matchedCount,
        metadata: { changed_paths: matchedPaths, changed_paths_count: matchedCount }
      })
    }
    return buildChangeRequest(settings.change, { ...basis, service, triage }, settings)
  })
  const skipped = selection.decisions.filter(decision => !decision.recorded).map(d => d.name)

  const results = await runAll(changes, MAX_CHANGES_IN_FLIGHT, change =>
    client.createChange(change)
  )
  const ids = new Map<string, string>()
  const accepted: Recorded['changes'] = []
  const failures: Array<{ name: string; error: unknown }> = []
  results.forEach((result, index) => {
    const name = recorded[index].name
    if (result.ok) {
      ids.set(name, result.value)
      accepted.push({ request: changes[index], id: result.value })
    } else failures.push({ name, error: result.error })
  })
  for (const [name, id] of ids) report.notice(answer(`Recorded change ${id} for ${name}.`))
  const rows = selection.decisions.map(({ name, recorded, reason }) => {
    const id = ids.get(name)
    const notRecorded = recorded ? 'not recorded' : 'skipped'
    return [name, id !== undefined ? answer(id) : notRecorded, reason]
  })
  const sections: Section[] = [
    ...(allRecordedBecause ? [{ note: allRecordedBecause }] : []),
    { list: 'Services', headers: ['Service', 'Change id', 'Why'], rows, outcome: 'recorded' }
  ]
  // Every change recorded is output, even when another one failed.
  const outputs = {
    [Outputs.ChangeIds]: JSON.stringify(Object.fromEntries(ids)),
    ...(ids.size === 1 && { [Outputs.ChangeId]: [...ids.values()][0] }),
    [Outputs.SkippedServices]: JSON.stringify(skipped)
  }
  const done = { subject: plural(ids.size, 'change'), outcome: 'recorded' as const }
  const rest = skipped.length ? `, ${skipped.length} skipped` : ''
  const error = failures.length > 0 ? notRecorded(failures, ids.size) : undefined
  const notDone = error && { what: `${plural(failures.length, 'change')} not recorded`, error }
  return {
    title: { done: { ...done, rest }, notDone },
    sections,
    outputs,
    changes: accepted,
    error
  }
}

/**
 * One error naming every service not recorded and why: an outage only if all were outages, else
 * the first mistake's kind (the failure policy treats a mistake alike, whatever the count).
 */
function notRecorded(
  failures: ReadonlyArray<{ name: string; error: unknown }>,
  recordedCount: number
): ServiceError {
  const kinds = failures.map(failure => failureKind(failure.error))
  const kind = kinds.find(each => each !== 'outage' && each !== 'input') ?? 'outage'
  const why = failures.map(failure => `${failure.name}: ${errorMessage(failure.error)}`).join(' ')
  return new ServiceError(
    `${plural(failures.length, 'service')} not recorded (${plural(recordedCount, 'other')} recorded). ${why}`,
    { kind, call: ENDPOINT_CALLS.createChange }
  )
}
