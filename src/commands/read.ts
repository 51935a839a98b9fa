import { Outputs } from '../action/names.ts'
import type { SummaryRow } from '../report.ts'
import type { CommandContext } from './command.ts'

/** The change fields shown in the summary, in the interface's order. */
const CHANGE_FIELDS = [
  'id',
  'service',
  'version',
  'environment',
  'user',
  'team',
  'description',
  'comment',
  'labels',
  'created_at',
  'custom_metadata'
] as const

/** `get-change`: read a change back by id. */
export async function getChange({ settings, client, report }: CommandContext): Promise<void> {
  const changeId = settings.changeId ?? ''
  const change = await client.getChange(changeId)
  if (change === undefined) {
    report.table('Change (dry run, not read)', [['Id', changeId]])
    return
  }
  report.output(Outputs.Change, JSON.stringify(change))
  report.info(`Read change ${changeId}.`)
  const rows: SummaryRow[] = CHANGE_FIELDS.map(field => [field, formatField(field, change[field])])
  report.table(`Change ${changeId}`, rows)
}

/** `hello`: check that the service accepts the API key. */
export async function hello({ settings, client, report }: CommandContext): Promise<void> {
  const answer = await client.hello()
  const host = settings.baseUrl.host
  if (answer === undefined) {
    report.table('API key check (dry run, not sent)', [['Service', host]])
    return
  }
  report.info(`The service at ${host} accepted the API key.`)
  report.table('API key check', [
    ['Service', host],
    ['Result', 'The API key is valid (GET /v2/hello answered OK).']
  ])
}

function formatField(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  if (field === 'created_at' && typeof value === 'number' && Number.isFinite(value)) {
    return `${new Date(value * 1000).toISOString()} (${value})`
  }
  return typeof value === 'string' ? value : JSON.stringify(value)
}
