import { isAbsolute, resolve } from 'node:path'
import { Outputs } from '../action/names.ts'
import { MAX_EVENT_IDS_PER_REQUEST } from '../service/client.ts'
import { InputError, ServiceError } from '../errors.ts'
import {
  describePartialFailure,
  eventBatches,
  streamEvents,
  validateEvents,
  type EventSource
} from '../events/events.ts'
import type { CommandContext } from './command.ts'

/** `events`: validate every event, then stream them to POST /v2/stream in batches. */
export async function sendEvents({ settings, client, report, env }: CommandContext): Promise<void> {
  const source = eventSource(settings.events, settings.eventsFile, env['GITHUB_WORKSPACE'])
  const validated = await validateEvents(source)
  const total = validated.total

  if (settings.dryRun) {
    let requests = 0
    for await (const batch of eventBatches(validated)) {
      await client.sendEvents(batch.body, batch.ids.length)
      batch.release()
      requests++
    }
    report.table('Events (dry run, not sent)', [
      ['Events', total],
      ['Requests', requests]
    ])
    return
  }

  let requests = 0
  const result = await streamEvents(validated, async batch => {
    const ids = await client.sendEvents(batch.body, batch.ids.length)
    requests++
    return ids ?? []
  })
  // Accepted ids are reported even when a later batch failed: nothing accepted is lost.
  report.outputLines(Outputs.EventIds, result.accepted.jsonLines())
  report.table('Events sent', [
    ['Events', total],
    ['Accepted', result.accepted.count],
    ['Requests', requests]
  ])
  if (result.failure) {
    // The partial failure keeps its cause's kind, so an outage stays an outage for the policy.
    const cause = result.failure.error
    const message = describePartialFailure(result)
    if (cause instanceof InputError) throw new InputError(cause.input, message)
    throw new ServiceError(message, {
      kind: cause instanceof ServiceError ? cause.kind : 'protocol',
      call: cause instanceof ServiceError ? cause.call : 'POST /v2/stream',
      status: cause instanceof ServiceError ? cause.status : undefined
    })
  }
  report.info(`Sent ${result.accepted.count} events in ${requests} requests.`)
}

/** `event-results`: read results for the ids, at most MAX_EVENT_IDS_PER_REQUEST per request. */
export async function getEventResults({ settings, client, report }: CommandContext): Promise<void> {
  const ids = settings.eventIds ?? []
  const responses: unknown[] = []
  for (let start = 0; start < ids.length; start += MAX_EVENT_IDS_PER_REQUEST) {
    responses.push(
      await client.getEventResults(ids.slice(start, start + MAX_EVENT_IDS_PER_REQUEST))
    )
  }
  if (settings.dryRun) {
    report.table('Event results (dry run, not read)', [
      ['Event ids', ids.length],
      ['Requests', responses.length]
    ])
    return
  }
  const results = combineResults(responses)
  report.output(Outputs.EventResults, JSON.stringify(results))
  report.info(`Read ${results.length} results for ${ids.length} event ids.`)
  report.table('Event results', [
    ['Event ids', ids.length],
    ['Requests', responses.length],
    ['Results', results.length]
  ])
}

/**
 * The results' shape is not documented. Arrays are concatenated; anything else is kept whole, as
 * one element per response, so nothing the service said is dropped.
 */
export function combineResults(responses: readonly unknown[]): unknown[] {
  if (responses.every(Array.isArray)) return (responses as unknown[][]).flat()
  return [...responses]
}

function eventSource(
  inline: string | undefined,
  file: string | undefined,
  workspace: string | undefined
): EventSource {
  if (inline !== undefined) return { kind: 'inline', text: inline }
  const path = file ?? ''
  return { kind: 'file', path: isAbsolute(path) ? path : resolve(workspace ?? process.cwd(), path) }
}
