import { Outputs } from '../action/names.ts'
import type { SummaryRow } from '../report.ts'
import { serviceRequests } from '../service/client.ts'
import type { CommandContext } from './command.ts'

/** The change fields shown in the summary, in the interface's order. */
const CHANGE_FIELDS = [
  ['id', 'Id'],
  ['service', 'Service'],
  ['version', 'Version'],
  ['environment', 'Environment'],
  ['user', 'User'],
  ['team', 'Team'],
  ['description', 'Description'],
  ['comment', 'Comment'],
  ['labels', 'Labels'],
  ['created_at', 'Created at'],
  ['custom_metadata', 'Custom metadata']
] as const

/** `get-change`: read a change back by id. */
export async function getChange(context: CommandContext): Promise<void> {
  const { settings, client, report } = context
  const changeId = settings.changeId ?? ''
  if (settings.dryRun) {
    context.printRequest(serviceRequests.getChange(changeId))
    report.setTitle('Change not read (dry run)')
    report.table('Change', [['Id', changeId]])
    return
  }
  const change = await client.getChange(changeId)
  report.output(Outputs.Change, JSON.stringify(change))
  report.info(`Read change ${changeId}.`)
  report.setTitle('Change read')
  const rows: SummaryRow[] = CHANGE_FIELDS.map(([field, label]) => [
    label,
    formatField(field, change?.[field])
  ])
  report.table('Change', rows)
}

/** `hello`: check that the service accepts the API key. */
export async function hello(context: CommandContext): Promise<void> {
  const { settings, client, report } = context
  const host = settings.baseUrl.host
  if (settings.dryRun) {
    context.printRequest(serviceRequests.hello())
    report.setTitle('API key not checked (dry run)')
    report.table('API key check', [['Service', host]])
    return
  }
  await client.hello()
  report.info(`The service at ${host} accepted the API key.`)
  report.setTitle('API key valid')
  report.table('API key check', [
    ['Service', host],
    ['Result', 'The API key is valid (GET /v2/hello answered OK).']
  ])
}

/** A field of a change as the summary shows it: created_at also as a date. */
export function formatField(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  if (field === 'created_at' && typeof value === 'number' && Number.isFinite(value)) {
    return `${new Date(value * 1000).toISOString()} (${value})`
  }
  return typeof value === 'string' ? value : JSON.stringify(value)
}
