/**
 * The guides' generated tables, so that none can drift: the inputs and outputs from action.yml,
 * the command line's flags from its own definitions, the built-in risk categories from the code.
 * `npm run docs` writes them; a test fails when a guide differs from what it would write.
 */
import { readdirSync } from 'node:fs'
import { parse } from 'yaml'
import { buildProgram } from '../src/cli/flags.ts'
import { BUILT_IN_RISK } from '../src/triage/risk.ts'

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
  const program = buildProgram('', quiet, {}, () => {})
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
    [FLAGS_MARKERS, flagsTable]
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
