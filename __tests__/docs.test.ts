/**
 * The README and the repository's YAML cannot drift: the tables say what action.yml says (read
 * here independently of the generator) and are what `npm run docs` writes, the examples are
 * valid workflows, and so are the repository's own workflows.
 */
import { describe, expect, it } from '@jest/globals'
import { validateAction, validateWorkflow } from '@action-validator/core'
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parse } from 'yaml'
import { INPUT_DEFAULTS } from '../src/action/names.ts'
import { NODE_24 } from './support/bundle-setup.ts'

const readme = readFileSync('README.md', 'utf8')
const actionYaml = readFileSync('action.yml', 'utf8')
interface ActionYaml {
  inputs: Record<string, { description: string; required?: boolean; default?: string }>
  outputs: Record<string, { description: string }>
  runs: { using: string; main: string }
}
const action = parse(actionYaml) as ActionYaml

/** The rows of the README table between two markers: the first cell's `name` → the other cells. */
function tableRows(markdown: string, section: 'inputs' | 'outputs'): Map<string, string[]> {
  const start = markdown.indexOf(`<!-- ${section}:start -->`)
  const end = markdown.indexOf(`<!-- ${section}:end -->`)
  const rows = new Map<string, string[]>()
  if (start === -1 || end < start) return rows
  for (const line of markdown.slice(start, end).split('\n')) {
    const name = /^\| `([^`]+)` \|/.exec(line)?.[1]
    if (name === undefined) continue
    // Cells split on | that markdown does not escape.
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map(cell => cell.trim())
    rows.set(name, cells.slice(1))
  }
  return rows
}

/** As a table cell shows a YAML text: whitespace collapsed, pipes escaped. */
function asCell(text: string): string {
  return text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|')
}

/** What the README's tables say differently from action.yml, one line per difference. */
function tableDrift(markdown: string, declared: ActionYaml): string[] {
  const problems: string[] = []
  const inputs = tableRows(markdown, 'inputs')
  for (const [name, input] of Object.entries(declared.inputs)) {
    const row = inputs.get(name)
    if (row === undefined) {
      problems.push(`input ${name}: no row`)
      continue
    }
    const expected = [
      input.required === true ? 'yes' : 'no',
      input.default === undefined ? '' : `\`${asCell(String(input.default))}\``,
      asCell(input.description)
    ]
    for (const [i, what] of ['required', 'default', 'description'].entries()) {
      if (row[i] !== expected[i]) problems.push(`input ${name}: ${what} is "${row[i]}"`)
    }
  }
  const outputs = tableRows(markdown, 'outputs')
  for (const [name, output] of Object.entries(declared.outputs)) {
    const row = outputs.get(name)
    if (row === undefined) problems.push(`output ${name}: no row`)
    else if (row[0] !== asCell(output.description)) problems.push(`output ${name}: description`)
  }
  for (const name of inputs.keys()) {
    if (!(name in declared.inputs)) problems.push(`input ${name}: not in action.yml`)
  }
  for (const name of outputs.keys()) {
    if (!(name in declared.outputs)) problems.push(`output ${name}: not in action.yml`)
  }
  return problems
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
  it('give every input and output of action.yml, with its default and description', () => {
    expect(tableDrift(readme, action)).toEqual([])
  })

  it('are what npm run docs writes: running it on a copy changes nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cta-docs-'))
    try {
      copyFileSync('README.md', join(dir, 'README.md'))
      copyFileSync('action.yml', join(dir, 'action.yml'))
      const said = execFileSync(NODE_24, [resolve('scripts', 'docs.ts')], {
        cwd: dir,
        encoding: 'utf8'
      })
      expect(said).toContain('up to date')
      expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe(readme)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('drift is caught: a missing row, a stale row, another default or description', () => {
    // Only what an edit adds counts, so that this holds whatever the README's state.
    const before = new Set(tableDrift(readme, action))
    const inSync = (name: string): boolean => ![...before].some(p => p.startsWith(`input ${name}:`))
    const names = Object.keys(action.inputs).filter(inSync)
    const withDefault = names.find(name => action.inputs[name].default !== undefined) as string
    const withoutDefault = names.find(
      name => action.inputs[name].default === undefined && action.inputs[name].required !== true
    ) as string
    const driftAfter = (edit: (declared: ActionYaml) => void): string[] => {
      const copy = structuredClone(action)
      edit(copy)
      return tableDrift(readme, copy).filter(problem => !before.has(problem))
    }
    expect(
      driftAfter(declared => (declared.inputs['new-input'] = { description: 'New.' }))
    ).toEqual(['input new-input: no row'])
    expect(driftAfter(declared => delete declared.inputs[withDefault])).toEqual([
      `input ${withDefault}: not in action.yml`
    ])
    expect(driftAfter(declared => (declared.inputs[withDefault].default = 'other'))).toEqual([
      `input ${withDefault}: default is "\`${action.inputs[withDefault].default}\`"`
    ])
    expect(
      driftAfter(declared => (declared.inputs[withoutDefault].description += ' More.'))
    ).toHaveLength(1)
    expect(driftAfter(declared => (declared.inputs[withoutDefault].required = true))).toEqual([
      `input ${withoutDefault}: required is "no"`
    ])
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

  it("action.yml's defaults are the ones the settings apply to empty inputs", () => {
    // An expression (github-token's ${{ github.token }}) is the runner's to evaluate.
    const declared = Object.fromEntries(
      Object.entries(action.inputs)
        .filter(
          ([, input]) => input.default !== undefined && !/^\$\{\{/.test(String(input.default))
        )
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
