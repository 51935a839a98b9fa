/**
 * The README's inputs and outputs tables, generated from action.yml, and its table of the built-in
 * risk categories, generated from the code, so that neither can drift. `npm run docs` writes them;
 * a test fails when the README differs from what it would write.
 */
import { parse } from 'yaml'
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

function replaceBetween(
  text: string,
  [start, end]: readonly [string, string],
  body: string
): string {
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  if (from === -1 || to === -1 || to < from) {
    throw new Error(`README.md lacks the markers ${start} … ${end}`)
  }
  return `${text.slice(0, from + start.length)}\n${body}\n${text.slice(to)}`
}

/** The README with its tables regenerated. */
export function renderReadme(readme: string, actionYaml: string): string {
  const withInputs = replaceBetween(readme, INPUTS_MARKERS, inputsTable(actionYaml))
  const withOutputs = replaceBetween(withInputs, OUTPUTS_MARKERS, outputsTable(actionYaml))
  return replaceBetween(withOutputs, RISK_MARKERS, riskTable())
}
