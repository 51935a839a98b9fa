import { answer, formatField, type SummaryRow } from '../summary.ts'
import { ENDPOINT_CALLS } from '../service/client.ts'
import { Outputs } from '../settings.ts'
import type { CommandResult } from '../report.ts'
import type { CommandContext } from './command.ts'

/** The change fields shown in the summary, in the interface's order ("Created at" for created_at). */
const CHANGE_FIELDS =
  'id service version environment user team description comment labels created_at custom_metadata'

/** `get-change`: read a change back by id. */
export async function getChange({
  settings,
  client,
  report
}: CommandContext): Promise<CommandResult> {
  const changeId = settings.changeId ?? ''
  const change = await client.getChange(changeId)
  report.info(answer(`Read change ${changeId}.`))
  const rows: SummaryRow[] = CHANGE_FIELDS.split(' ').map(field => [
    `${field[0].toUpperCase()}${field.slice(1).replace('_', ' ')}`,
    formatField(field, change[field])
  ])
  return {
    title: { done: { subject: 'Change', outcome: 'read' } },
    sections: [{ table: 'Change', rows }],
    outputs: { [Outputs.Change]: JSON.stringify(change) }
  }
}

/** `hello`: check that the service accepts the API key. */
export async function hello({ settings, client, report }: CommandContext): Promise<CommandResult> {
  const host = settings.baseUrl.host
  const ok = await client.hello()
  report.info(answer(`The service at ${host} accepted the API key.`))
  const rows: SummaryRow[] = [
    ['Service', host],
    ['Result', answer(`The API key is valid (${ENDPOINT_CALLS.hello} answered ${ok}).`)]
  ]
  return {
    title: { done: { subject: 'API key', outcome: 'valid' } },
    sections: [{ table: 'API key check', rows }],
    outputs: {}
  }
}
