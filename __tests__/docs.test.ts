/**
 * The README and the repository's YAML cannot drift: the tables come from action.yml, the
 * examples are valid workflows, and so are the repository's own workflows.
 */
import { describe, expect, it } from '@jest/globals'
import { validateAction, validateWorkflow } from '@action-validator/core'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { inputsTable, renderReadme } from '../scripts/readme-tables.ts'
import { INPUT_DEFAULTS } from '../src/action/names.ts'

const readme = readFileSync('README.md', 'utf8')
const actionYaml = readFileSync('action.yml', 'utf8')
const action = parse(actionYaml) as {
  inputs: Record<string, { description: string; default?: string }>
  outputs: Record<string, { description: string }>
  runs: { using: string; main: string }
}

/** The ```yaml blocks of the README. */
function yamlBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```yaml\n([\s\S]*?)```/g)].map(match => match[1])
}

/** Wraps a list of steps (a README snippet) into a minimal workflow. */
function asWorkflow(block: string): string {
  if (/^on:/m.test(block)) return block
  const steps = block.replace(/^/gm, '      ')
  return `on: push\njobs:\n  example:\n    runs-on: ubuntu-latest\n    steps:\n${steps}`
}

describe('README tables', () => {
  it('are exactly what npm run docs writes from action.yml', () => {
    expect(readme).toBe(renderReadme(readme, actionYaml))
  })

  it('would differ if an input description changed', () => {
    const changed = actionYaml.replace(
      'Who made the change. Default `GITHUB_ACTOR`.',
      'Who made it.'
    )
    expect(changed).not.toBe(actionYaml)
    expect(inputsTable(changed)).not.toBe(inputsTable(actionYaml))
    expect(readme).not.toBe(renderReadme(readme, changed))
  })

  it('name every input and output', () => {
    for (const name of [...Object.keys(action.inputs), ...Object.keys(action.outputs)]) {
      expect(readme).toContain(`\`${name}\``)
    }
  })
})

describe('README examples', () => {
  const blocks = yamlBlocks(readme)

  it('include a workflow for each use', () => {
    const workflows = blocks.filter(block => /^on:/m.test(block)).join('\n')
    for (const trigger of [
      'push:',
      'deployment_status',
      'release:',
      'schedule:',
      'workflow_dispatch'
    ]) {
      expect(workflows).toContain(trigger)
    }
    for (const command of [
      'command: heartbeat',
      'events-file:',
      'command: hello',
      'command: get-change'
    ]) {
      expect(workflows).toContain(command)
    }
  })

  it.each(blocks.map((block, i) => [i + 1, block]))('block %i is a valid workflow', (_i, block) => {
    expect(() => parse(block as string)).not.toThrow()
    expect(validateWorkflow(asWorkflow(block as string)).errors).toEqual([])
  })

  it('use only inputs that action.yml declares', () => {
    const uses = blocks.flatMap(block => {
      const parsed = parse(asWorkflow(block)) as {
        jobs: Record<string, { steps: Array<{ uses?: string; with?: Record<string, unknown> }> }>
      }
      return Object.values(parsed.jobs).flatMap(job => job.steps)
    })
    const ours = uses.filter(step => step.uses?.includes('change-tracking-action'))
    expect(ours.length).toBeGreaterThanOrEqual(8)
    for (const step of ours) {
      for (const input of Object.keys(step.with ?? {}))
        expect(Object.keys(action.inputs)).toContain(input)
    }
  })
})

describe('repository YAML', () => {
  const workflowDir = join('.github', 'workflows')
  const workflows = readdirSync(workflowDir).filter(name => name.endsWith('.yml'))

  it('has the CI, check-dist and end-to-end workflows', () => {
    expect(workflows.sort()).toEqual(['check-dist.yml', 'ci.yml', 'e2e.yml'])
  })

  it.each(workflows)('%s is a valid workflow', name => {
    expect(validateWorkflow(readFileSync(join(workflowDir, name), 'utf8')).errors).toEqual([])
  })

  it('action.yml is a valid action on the node24 runtime', () => {
    expect(action.runs).toEqual({ using: 'node24', main: 'dist/index.js' })
    // The validator's bundled schema predates node24; everything else is checked against it.
    const asKnownRuntime = actionYaml.replace('using: node24', 'using: node20')
    expect(validateAction(asKnownRuntime).errors).toEqual([])
  })

  it("action.yml's defaults are the ones the settings apply to empty inputs", () => {
    const declared = Object.fromEntries(
      Object.entries(action.inputs)
        .filter(([, input]) => input.default !== undefined)
        .map(([name, input]) => [name, String(input.default)])
    )
    expect(declared).toEqual({ ...INPUT_DEFAULTS })
  })

  it('action.yml describes every input and output', () => {
    for (const input of Object.values(action.inputs))
      expect(input.description.length).toBeGreaterThan(20)
    for (const output of Object.values(action.outputs))
      expect(output.description.length).toBeGreaterThan(20)
  })
})
