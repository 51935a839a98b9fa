/**
 * The README, the guides and the repository's YAML cannot drift: the generated tables are what
 * `npm run docs` writes, the layout table names the tree as it is, the workflow examples are
 * valid workflows, every link between the docs resolves, and the README stays a front door.
 */
import { describe, expect, it } from '@jest/globals'
import { validateAction, validateWorkflow } from '@action-validator/core'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { parse } from 'yaml'
import { flagsTable, GUIDES, renderGuide, riskTable } from '../scripts/docs-tables.ts'

const readme = readFileSync('README.md', 'utf8')
const guides = GUIDES.map(path => ({ path, text: readFileSync(path, 'utf8') }))
const actionYaml = readFileSync('action.yml', 'utf8')
interface ActionYaml {
  inputs: Record<string, { description: string; required?: boolean; default?: string }>
  outputs: Record<string, { description: string }>
  runs: { using: string; main: string }
}
const action = parse(actionYaml) as ActionYaml

describe('generated tables', () => {
  it.each(GUIDES)('in %s are what npm run docs writes', path => {
    const text = readFileSync(path, 'utf8')
    expect(renderGuide(text, actionYaml)).toBe(text)
  })

  it('list every flag of the command line, with its variable', () => {
    const table = flagsTable()
    for (const flag of ['--base-url', '--dry-run [true|false]', '--api-key-file', '--debug'])
      expect(table).toContain(flag.replace('|', '\\|'))
    expect(table).toContain('`CHANGE_TRACKING_BASE_URL`')
    expect(table).not.toContain('--api-key <')
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
    expect(renderGuide(readme, yaml)).toBe(
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

describe('the layout table of the development guide', () => {
  const development = readFileSync('docs/development.md', 'utf8')
  const section = development.slice(development.indexOf('Layout, one concern per file'))
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

/** The ```yaml blocks of a markdown text. */
function yamlBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```yaml\n([\s\S]*?)```/g)].map(match => match[1])
}

/** Wraps a list of steps (a README snippet) into a minimal workflow. */
function asWorkflow(block: string): string {
  if (/^on:/m.test(block)) return block
  const steps = block.replace(/^/gm, '      ')
  return `on: push\njobs:\n  example:\n    runs-on: ubuntu-latest\n    steps:\n${steps}`
}

describe('workflow examples in the guides', () => {
  // GitHub workflows: a GitLab CI job (its `script:` key) is the command line's example, and a
  // Kubernetes manifest (its `apiVersion:`) the receiver's, checked by __tests__/serve/.
  const blocks = guides
    .flatMap(({ text }) => yamlBlocks(text))
    .filter(block => !/^\s+script:/m.test(block) && !/^apiVersion:/m.test(block))

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

  it('has the CI, check-dist, end-to-end and release workflows', () => {
    expect(workflows.sort()).toEqual(['check-dist.yml', 'ci.yml', 'e2e.yml', 'release.yml'])
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

describe('links between the docs', () => {
  /** A heading's anchor, as GitHub makes it. */
  const anchor = (heading: string): string =>
    heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-')
  const anchorsOf = (text: string): string[] =>
    [...text.matchAll(/^#{1,6} (.*)$/gm)].map(match => anchor(match[1]))

  it.each(guides.map(({ path, text }) => [path, text]))('in %s resolve', (path, text) => {
    const broken = [...text.matchAll(/\]\(([^)\s]+)\)/g)]
      .map(match => match[1])
      .filter(target => !/^[a-z]+:/i.test(target))
      .filter(target => {
        const [file, hash] = target.split('#')
        const resolved = file === '' ? path : join(dirname(path), file)
        if (!existsSync(resolved)) return true
        return hash !== undefined && !anchorsOf(readFileSync(resolved, 'utf8')).includes(hash)
      })
    expect(broken).toEqual([])
  })
})

describe('the README, a front door', () => {
  it('is at most 250 lines, in the order: what it does, a picture, the two ways in, the fields, the guides', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(250)
    const order = [
      '![',
      '## GitHub Actions',
      '## Any other CI',
      '## What a change records',
      '## Guides'
    ]
    const at = order.map(mark => readme.indexOf(mark))
    expect(at.every(index => index > 0)).toBe(true)
    expect([...at].sort((a, b) => a - b)).toEqual(at)
    for (const [language, key] of [
      ['yaml', 'script:'],
      ['groovy', 'change-tracking(-action@1)? run'],
      ['sh', 'change-tracking(-action@1)? run']
    ])
      expect(readme).toMatch(new RegExp('```' + language + '\\n[^`]*' + key))
  })

  it('shows a failed deploy’s job summary, a picture at least 400 pixels wide', () => {
    const [, alt, image] = /!\[([^\]]*)\]\(([^)]+)\)/.exec(readme) ?? []
    expect(`${alt} ${image}`).toMatch(/failed deploy/i)
    const png = readFileSync(image)
    expect(png.subarray(1, 4).toString()).toBe('PNG')
    expect(png.readUInt32BE(16)).toBeGreaterThanOrEqual(400)
  })

  it('names no constant or source file in the user docs', () => {
    const userDocs = guides.filter(({ path }) => !path.includes('development'))
    const named = userDocs.flatMap(({ path, text }) =>
      [
        ...text.matchAll(/\b(?:MAX|MIN)_[A-Z_]+|\b[A-Z_]+_(?:MS|BYTES|CHARS)\b|src\/[\w/.-]+\.ts/g)
      ].map(match => `${path}: ${match[0]}`)
    )
    expect(named).toEqual([])
  })
})
