/**
 * The README and the repository's YAML cannot drift: the inputs and outputs tables are what
 * `npm run docs` writes from action.yml, the layout table names the tree as it is, the examples
 * are valid workflows, and so are the repository's own workflows.
 */
import { describe, expect, it } from '@jest/globals'
import { validateAction, validateWorkflow } from '@action-validator/core'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { renderReadme, riskTable } from '../scripts/readme-tables.ts'

const readme = readFileSync('README.md', 'utf8')
const actionYaml = readFileSync('action.yml', 'utf8')
interface ActionYaml {
  inputs: Record<string, { description: string; required?: boolean; default?: string }>
  outputs: Record<string, { description: string }>
  runs: { using: string; main: string }
}
const action = parse(actionYaml) as ActionYaml

describe('README tables', () => {
  it('are what npm run docs writes from action.yml', () => {
    expect(renderReadme(readme, actionYaml)).toBe(readme)
  })

  it('give each input its required flag, default and description, and each output its description', () => {
    const markers = (name: string): string => `<!-- ${name}:start -->\nold\n<!-- ${name}:end -->`
    const yaml = [
      'inputs:',
      '  mode:',
      '    description: One of a | b,',
      '      on two lines.',
      '    required: true',
      "    default: 'a'",
      'outputs:',
      '  id:',
      '    description: The id.'
    ].join('\n')
    const readme = `${markers('inputs')}\n${markers('outputs')}\n${markers('risk')}`
    expect(renderReadme(readme, yaml)).toBe(
      [
        '<!-- inputs:start -->',
        '| Input | Required | Default | Description |',
        '| --- | --- | --- | --- |',
        '| `mode` | yes | `a` | One of a \\| b, on two lines. |',
        '<!-- inputs:end -->',
        '<!-- outputs:start -->',
        '| Output | Description |',
        '| --- | --- |',
        '| `id` | The id. |',
        '<!-- outputs:end -->',
        '<!-- risk:start -->',
        riskTable(),
        '<!-- risk:end -->'
      ].join('\n')
    )
  })
})

describe('README layout table', () => {
  const section = readme.slice(readme.indexOf('Layout, one concern per file'))
  const rows = section
    .slice(0, section.indexOf('\n\n', section.indexOf('| Where |')))
    .split('\n')
    .filter(line => line.startsWith('| `'))
    .map(line => line.split(' | '))
  const named = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map(m => m[1])

  it('names only files and folders that exist', () => {
    const missing = rows.flatMap(([where, what]) => {
      const folder = named(where).find(path => path.endsWith('/')) ?? ''
      const files = named(what).filter(name => name.endsWith('.ts'))
      const paths = [
        ...named(where),
        ...files.map(name => (name.includes('/') ? name : folder + name))
      ]
      return paths.filter(path => !existsSync(path))
    })
    expect(missing).toEqual([])
  })

  it('gives every file and folder at the top of src/ a row', () => {
    const listed = rows.flatMap(([where, what]) => [...named(where), ...named(what)])
    const entries = readdirSync('src', { withFileTypes: true })
    const unlisted = entries
      .map(entry => `src/${entry.name}${entry.isDirectory() ? '/' : ''}`)
      .filter(path => !listed.includes(path))
    expect(unlisted).toEqual([])
  })
})

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

describe('README examples', () => {
  // GitHub workflows: a GitLab CI job (its `script:` key) is the command line's example.
  const blocks = yamlBlocks(readme).filter(block => !/^\s+script:/m.test(block))

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
    expect(action.runs).toEqual({
      using: 'node24',
      main: 'dist/index.js',
      post: 'dist/index.js',
      'post-if': 'always()'
    })
    // The validator's bundled schema predates node24; everything else is checked against it.
    const asKnownRuntime = actionYaml.replace('using: node24', 'using: node20')
    expect(validateAction(asKnownRuntime).errors).toEqual([])
  })

  it('action.yml describes every input and output', () => {
    for (const input of Object.values(action.inputs))
      expect(input.description.length).toBeGreaterThan(20)
    for (const output of Object.values(action.outputs))
      expect(output.description.length).toBeGreaterThan(20)
  })
})
