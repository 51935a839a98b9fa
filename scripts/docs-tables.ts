/**
 * The guides' generated tables, so that none can drift: the inputs and outputs from action.yml,
 * the command line's flags from its own definitions, the built-in risk categories from the code.
 * `npm run docs` writes them; a test fails when a guide differs from what it would write.
 */
import { readdirSync } from 'node:fs'
import { parse } from 'yaml'
import { buildProgram } from '../src/cli/flags.ts'
import { JOB_ENVIRONMENT_BUDGET_MS } from '../src/action/job-environment.ts'
import { MAX_JOB_START_AGE_MS } from '../src/action/post-state.ts'
import { MAX_EVENT_PAYLOAD_BYTES } from '../src/action/run-context.ts'
import { MAX_ID_TOKEN_ANSWER_BYTES } from '../src/action/runner.ts'
import { MAX_MATCHED_PATHS, SERVICE_SELECTION_BUDGET_MS } from '../src/services/selection.ts'
import { MAX_DESCRIPTION_CHARS } from '../src/describe.ts'
import { MAX_DOCUMENT_BYTES } from '../src/events/source.ts'
import { MAX_JSON_DEPTH } from '../src/helpers/json.ts'
import { MAX_MESSAGE_CHARS } from '../src/report.ts'
import { MAX_EVENTS_PER_REQUEST, MAX_REQUEST_BYTES } from '../src/service/client.ts'
import { OUTAGE_BUDGET_MS } from '../src/service/retry.ts'
import { MAX_RESPONSE_BYTES } from '../src/service/transport.ts'
import { MAX_API_CALLS } from '../src/shipped/github-client.ts'
import { MAX_COMMITS, MAX_SHIPPED_METADATA_BYTES } from '../src/shipped/metadata.ts'
import { LOOKUP_BUDGET_MS } from '../src/shipped/types.ts'
import { AFTER_DEPLOY_BUDGET_MS, CANCEL_GRACE_MS, KEY_CHECK_BUDGET_MS } from '../src/step.ts'
import { DETECTION_GIT_BUDGET_MS } from '../src/cli/ci-context.ts'
import { MAX_SECRET_FILE_BYTES } from '../src/values/secret-file.ts'
import { MAX_SUMMARY_CELL_CHARS } from '../src/summary.ts'
import { MAX_SCANNED_CHARS, MAX_SCANNED_CHARS_PER_TEXT } from '../src/triage/issue-keys.ts'
import { MAX_ADDED_LABELS, MAX_ISSUE_LABELS, MAX_LABEL_CHARS } from '../src/triage/labels.ts'
import { MAX_CLOSES, MAX_ISSUES } from '../src/triage/triage.ts'
import { MAX_SERVICES, MAX_PATTERNS_PER_SERVICE } from '../src/services/definition.ts'
import { BUILT_IN_RISK } from '../src/triage/risk.ts'
import { MAX_OTEL_BYTES } from '../src/otel.ts'
import { MAX_ARTIFACT_CHARS } from '../src/values/artifact.ts'

interface ActionInput {
  description?: string
  required?: boolean
  default?: string
}
interface ActionDefinition {
  inputs?: Record<string, ActionInput>
  outputs?: Record<string, { description?: string }>
}

export const INPUTS_MARKERS = ['<!-- inputs:start -->', '<!-- inputs:end -->'] as const
export const OUTPUTS_MARKERS = ['<!-- outputs:start -->', '<!-- outputs:end -->'] as const
export const RISK_MARKERS = ['<!-- risk:start -->', '<!-- risk:end -->'] as const
export const FLAGS_MARKERS = ['<!-- flags:start -->', '<!-- flags:end -->'] as const
export const BOUNDS_MARKERS = ['<!-- bounds:start -->', '<!-- bounds:end -->'] as const

function cell(text: string): string {
  return text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|')
}

export function inputsTable(actionYaml: string): string {
  const action = parse(actionYaml) as ActionDefinition
  const rows = Object.entries(action.inputs ?? {}).map(([name, input]) => {
    const required = input.required ? 'yes' : 'no'
    const fallback = input.default === undefined ? '' : `\`${cell(String(input.default))}\``
    return `| \`${name}\` | ${required} | ${fallback} | ${cell(input.description ?? '')} |`
  })
  return [
    '| Input | Required | Default | Description |',
    '| --- | --- | --- | --- |',
    ...rows
  ].join('\n')
}

export function outputsTable(actionYaml: string): string {
  const action = parse(actionYaml) as ActionDefinition
  const rows = Object.entries(action.outputs ?? {}).map(
    ([name, output]) => `| \`${name}\` | ${cell(output.description ?? '')} |`
  )
  return ['| Output | Description |', '| --- | --- |', ...rows].join('\n')
}

export function riskTable(): string {
  const rows = BUILT_IN_RISK.map(
    ({ name, patterns }) => `| \`${name}\` | ${patterns.map(p => `\`${p}\``).join(' ')} |`
  )
  return ['| Category | Patterns |', '| --- | --- |', ...rows].join('\n')
}

/** Each flag of the command line, its variable, default and the commands that take it. */
export function flagsTable(): string {
  const quiet = { writeOut: () => {}, writeErr: () => {} }
  const program = buildProgram('', quiet, {})
  const flags = new Map<
    string,
    { variable?: string; fallback?: string; help: string; in: string[] }
  >()
  for (const command of program.commands) {
    for (const option of command.options.filter(option => !option.hidden)) {
      const row = flags.get(option.flags) ?? {
        variable: option.envVar,
        fallback: option.defaultValue as string | undefined,
        help: option.description,
        in: []
      }
      row.in.push(command.name())
      flags.set(option.flags, row)
    }
  }
  const every = program.commands.length
  const code = (text: string | undefined): string => (text ? `\`${text}\`` : '')
  const rows = [...flags].map(
    ([flag, row]) =>
      `| ${code(cell(flag))} | ${code(row.variable)} | ${code(row.fallback)} | ${row.in.length === every ? 'all' : row.in.join(', ')} | ${cell(row.help)} |`
  )
  return [
    '| Flag | Variable | Default | Commands | Description |',
    '| --- | --- | --- | --- | --- |',
    ...rows
  ].join('\n')
}

const seconds = (ms: number): string => `${ms / 1000} s`
function size(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes.toLocaleString('en')} bytes`
}
const count = (n: number, what: string): string => `${n.toLocaleString('en')} ${what}`

/** Every bound a user may meet, in words, each number read from the one place the code names it. */
export function boundsTable(): string {
  const rows: Array<[string, string]> = [
    [
      'What one run may spend on an outage (a larger `timeout-seconds` raises it)',
      seconds(OUTAGE_BUDGET_MS)
    ],
    [
      'The key check before a deploy (`record-at: job-end`, `change-tracking run`)',
      seconds(KEY_CHECK_BUDGET_MS)
    ],
    [
      'The calls after a deploy (a job-end post step, `run` after its deploy)',
      seconds(AFTER_DEPLOY_BUDGET_MS)
    ],
    ['After a SIGINT, sending the change with what is known', seconds(CANCEL_GRACE_MS)],
    [
      'The API key file (`--api-key-file`) and the receiver’s webhook secret file, read',
      size(MAX_SECRET_FILE_BYTES)
    ],
    [
      'git, reading the CI’s context from the checkout (all its calls)',
      seconds(DETECTION_GIT_BUDGET_MS)
    ],
    ['Waiting for the job’s OIDC token', seconds(JOB_ENVIRONMENT_BUDGET_MS)],
    ['The OIDC token endpoint’s answer, read', size(MAX_ID_TOKEN_ANSWER_BYTES)],
    ['The lookup of what shipped (GitHub’s API or git)', seconds(LOOKUP_BUDGET_MS)],
    ['GitHub API calls of one lookup', count(MAX_API_CALLS, 'calls')],
    [
      'Matching the changed files against services and risk patterns',
      seconds(SERVICE_SELECTION_BUDGET_MS)
    ],
    ['The service’s answer, read', size(MAX_RESPONSE_BYTES)],
    ['The event payload, read', size(MAX_EVENT_PAYLOAD_BYTES)],
    ['A saved job start, still trusted', `${MAX_JOB_START_AGE_MS / 86_400_000} days`],
    [
      'A change’s description, when the action writes it',
      count(MAX_DESCRIPTION_CHARS, 'characters')
    ],
    ['Labels the action adds after yours', count(MAX_ADDED_LABELS, 'labels')],
    ['A label the action adds', count(MAX_LABEL_CHARS, 'characters')],
    ['`issue:` labels', count(MAX_ISSUE_LABELS, 'labels')],
    [
      'Issue keys listed (`issues`); issues closed listed (`closes`)',
      `${MAX_ISSUES}; ${MAX_CLOSES}`
    ],
    [
      'Text read for issue keys: each text; all of them',
      `${size(MAX_SCANNED_CHARS_PER_TEXT)}; ${size(MAX_SCANNED_CHARS)}`
    ],
    [
      'Commits listed in `custom_metadata` (the count is always whole)',
      count(MAX_COMMITS, 'commits')
    ],
    ['What shipped, in `custom_metadata`', size(MAX_SHIPPED_METADATA_BYTES)],
    ['Matched paths listed per service', count(MAX_MATCHED_PATHS, 'paths')],
    ['Services in one step; patterns per service', `${MAX_SERVICES}; ${MAX_PATTERNS_PER_SERVICE}`],
    ['OpenTelemetry’s names, in `custom_metadata.otel`', size(MAX_OTEL_BYTES)],
    ['An `artifact`', count(MAX_ARTIFACT_CHARS, 'characters')],
    ['JSON nesting (`custom-metadata`, events)', count(MAX_JSON_DEPTH, 'levels')],
    ['An events file read whole (NDJSON is read a line at a time)', size(MAX_DOCUMENT_BYTES)],
    [
      'One request of events',
      `${count(MAX_EVENTS_PER_REQUEST, 'events')}, ${size(MAX_REQUEST_BYTES)}`
    ],
    ['A log line, an annotation, the `error` output', count(MAX_MESSAGE_CHARS, 'characters')],
    ['A cell of the job summary', count(MAX_SUMMARY_CELL_CHARS, 'characters')]
  ]
  return [
    '| Bound | At most |',
    '| --- | --- |',
    ...rows.map(([what, value]) => `| ${what} | ${value} |`)
  ].join('\n')
}

function replaceBetween(
  text: string,
  [start, end]: readonly [string, string],
  body: string
): string {
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  if (from === -1 || to === -1 || to < from) {
    throw new Error(`A guide lacks the end marker of ${start} … ${end}`)
  }
  return `${text.slice(0, from + start.length)}\n${body}\n${text.slice(to)}`
}

/** A guide with every generated table it holds (between its markers) written anew. */
export function renderGuide(guide: string, actionYaml: string): string {
  const tables: Array<[readonly [string, string], () => string]> = [
    [INPUTS_MARKERS, () => inputsTable(actionYaml)],
    [OUTPUTS_MARKERS, () => outputsTable(actionYaml)],
    [RISK_MARKERS, riskTable],
    [FLAGS_MARKERS, flagsTable],
    [BOUNDS_MARKERS, boundsTable]
  ]
  return tables.reduce(
    (text, [markers, table]) =>
      text.includes(markers[0]) ? replaceBetween(text, markers, table()) : text,
    guide
  )
}

/** The README, SECURITY.md and the guides in docs/. */
export const GUIDES = [
  'README.md',
  'SECURITY.md',
  ...readdirSync('docs')
    .filter(name => name.endsWith('.md'))
    .map(name => `docs/${name}`)
]
