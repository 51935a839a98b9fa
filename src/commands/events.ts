import { isAbsolute, resolve } from 'node:path'
import { ENDPOINT_CALLS, MAX_EVENT_IDS_PER_REQUEST } from '../service/client.ts'
import { InputError, ServiceError, errorMessage } from '../errors.ts'
import { EventsError, type EventSource } from '../events/source.ts'
import { describePartialFailure, streamEvents, type StreamResult } from '../events/stream.ts'
import { validateEvents } from '../events/validate.ts'
import { answer, failureReason, type SummaryRow } from '../summary.ts'
import { Inputs, Outputs } from '../settings.ts'
import { plural } from '../helpers/text.ts'
import type { CommandResult } from '../report.ts'
import type { CommandContext } from './command.ts'

/** `events`: validate every event, then stream them to POST /v2/stream in batches. */
export async function sendEvents({
  settings,
  run,
  client,
  report
}: CommandContext): Promise<CommandResult> {
  const path = settings.eventsFile ?? ''
  const source: EventSource =
    settings.events !== undefined
      ? { kind: 'inline', text: settings.events }
      : { kind: 'file', path: isAbsolute(path) ? path : resolve(run.workspace, path) }
  const validated = await validateEvents(source).catch((error: unknown) => {
    throw inputErrorOf(source, error)
  })

  let requests = 0
  let sent = 0
  // A failing batch, even one the source could not read, ends up in result.failure.
  const result = await streamEvents(validated, async batch => {
    requests++
    sent += batch.ids.length
    return client.sendEvents(batch.body, batch.ids.length)
  })
  const { total } = validated
  const accepted = result.accepted.count
  const failure = result.failure && inputErrorOf(source, result.failure.error)
  // A failed batch's events were sent and not accepted; those after it were never sent.
  const rows: SummaryRow[] = [
    ['Events', total],
    ['Sent', answer(`${plural(sent, 'event')} in ${plural(requests, 'request')}`)],
    ['Accepted', answer(accepted)],
    [
      'Not accepted',
      answer(sent > accepted ? `${sent - accepted} (${failureReason(failure)})` : undefined)
    ],
    ['Not sent', total > sent ? total - sent : undefined]
  ]
  const reported = {
    sections: [{ table: 'Events', rows, outcome: 'sent' } as const],
    // Accepted ids are output even when a later batch failed: nothing accepted is lost.
    outputs: { [Outputs.EventIds]: result.accepted.jsonLines() }
  }
  if (result.failure === undefined) {
    report.info(answer(`Sent ${plural(accepted, 'event')} in ${plural(requests, 'request')}.`))
    return { ...reported, title: { done: { subject: plural(total, 'event'), outcome: 'sent' } } }
  }
  const done = accepted > 0 ? { subject: `${plural(accepted, 'event')} accepted` } : undefined
  const what = `${plural(total - accepted, 'event')} not accepted`
  return {
    ...reported,
    title: { done, notDone: { what, error: failure } },
    error: partialFailure(result, failure)
  }
}

/** The partial failure, with its cause's kind: an outage stays an outage for the policy. */
function partialFailure(result: StreamResult, failure: unknown): Error {
  if (failure instanceof InputError) {
    const { saying } = failure
    return new InputError(failure.input, named => describePartialFailure(result, saying(named)))
  }
  const details =
    failure instanceof ServiceError
      ? failure
      : { kind: 'protocol' as const, call: ENDPOINT_CALLS.sendEvents }
  return new ServiceError(describePartialFailure(result, errorMessage(failure)), details)
}

/** `event-results`: read results for the ids, at most MAX_EVENT_IDS_PER_REQUEST per request. */
export async function getEventResults({
  settings,
  client,
  report
}: CommandContext): Promise<CommandResult> {
  const ids = settings.eventIds ?? []
  const responses: unknown[] = []
  for (let start = 0; start < ids.length; start += MAX_EVENT_IDS_PER_REQUEST) {
    responses.push(
      await client.getEventResults(ids.slice(start, start + MAX_EVENT_IDS_PER_REQUEST))
    )
  }
  const results = combineResults(responses)
  report.info(
    answer(`Read ${plural(results.length, 'result')} for ${plural(ids.length, 'event id')}.`)
  )
  const rows: SummaryRow[] = [
    ['Event ids', ids.length],
    ['Requests', responses.length],
    ['Results', answer(results.length)]
  ]
  return {
    title: {},
    sections: [{ table: 'Event results', rows, outcome: 'read' }],
    outputs: { [Outputs.EventResults]: JSON.stringify(results) }
  }
}

/**
 * The results' shape is not documented. Arrays are concatenated; anything else is kept whole, as
 * one element per response, so nothing the service said is dropped.
 */
export function combineResults(responses: readonly unknown[]): unknown[] {
  if (responses.every(Array.isArray)) return (responses as unknown[][]).flat()
  return [...responses]
}

/** An EventsError as an InputError naming events or events-file; anything else as it is. */
function inputErrorOf(source: EventSource, error: unknown): unknown {
  if (!(error instanceof EventsError)) return error
  if (source.kind === 'inline') return new InputError(Inputs.Events, error.detail)
  return new InputError(Inputs.EventsFile, ` ("${source.path}")${error.detail}`)
}
