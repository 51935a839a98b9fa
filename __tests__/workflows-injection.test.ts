/**
 * Every README example and every workflow of the repository passes values to scripts through
 * `env:`, never as `${{ … }}` inside `run:`: the runner pastes an expression into the script
 * before the shell reads it, so an event named `it's done` breaks the step and a crafted step
 * output, input or event field runs code.
 */
import { describe, expect, it } from '@jest/globals'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'

interface Step {
  name?: string
  run?: unknown
}
interface Workflow {
  jobs?: Record<string, { steps?: Step[] }>
  /** A composite action's steps. */
  runs?: { steps?: Step[] }
}

/** A step as it would be reported: where it is and the expressions its script holds. */
interface ScriptInjection {
  where: string
  expressions: string[]
}

const EXPRESSION = /\$\{\{[\s\S]*?\}\}/g
/** A mapping entry whose value is an expression, other than run: (an env: or with: entry). */
const ENV_ENTRY = /^\s*(-\s+)?(?!run:)[\w-]+:\s*['"]?\$\{\{/

/** The steps of a document that is a workflow, a list of steps, or a composite action. */
function stepsOf(document: unknown): Step[] {
  if (Array.isArray(document)) return document as Step[]
  const workflow = (document ?? {}) as Workflow
  const jobSteps = Object.values(workflow.jobs ?? {}).flatMap(job => job.steps ?? [])
  return [...jobSteps, ...(workflow.runs?.steps ?? [])]
}

/** Each `run:` of a YAML document that holds a `${{ }}` expression, with its 1-based line. */
function scriptInjections(yamlText: string, name: string, firstLine = 1): ScriptInjection[] {
  const lines = yamlText.split('\n')
  return stepsOf(parse(yamlText)).flatMap((step, index) => {
    if (typeof step.run !== 'string') return []
    const expressions = step.run.match(EXPRESSION) ?? []
    if (expressions.length === 0) return []
    // The script's line, not an env: entry that carries the same expression safely.
    const first = String(expressions[0])
    const at = lines.findIndex(line => line.includes(first) && !ENV_ENTRY.test(line))
    const line = at === -1 ? '?' : String(firstLine + at)
    return [{ where: `${name}:${line} (step ${step.name ?? index + 1})`, expressions }]
  })
}

/** The ```yaml blocks of a markdown text, each with the line its first YAML line is on. */
function yamlBlocks(markdown: string): Array<{ text: string; line: number }> {
  const blocks: Array<{ text: string; line: number }> = []
  for (const match of markdown.matchAll(/```ya?ml\n([\s\S]*?)```/g)) {
    const line = markdown.slice(0, match.index).split('\n').length + 1
    blocks.push({ text: match[1], line })
  }
  return blocks
}

const workflowDir = join('.github', 'workflows')
const workflows = readdirSync(workflowDir).filter(name => /\.ya?ml$/.test(name))

describe('scripts get outside values through env:, never ${{ }} inside run:', () => {
  it('in every README example', () => {
    const found = yamlBlocks(readFileSync('README.md', 'utf8')).flatMap(block =>
      scriptInjections(block.text, 'README.md', block.line)
    )
    expect(found).toEqual([])
  })

  it.each(workflows)('in .github/workflows/%s', name => {
    const path = join(workflowDir, name)
    expect(scriptInjections(readFileSync(path, 'utf8'), path)).toEqual([])
  })

  it('in action.yml, when it runs scripts', () => {
    expect(scriptInjections(readFileSync('action.yml', 'utf8'), 'action.yml')).toEqual([])
  })
})

describe('the check itself', () => {
  const markdown = [
    'Read a change back:',
    '',
    '```yaml',
    '- id: read',
    '  uses: octo-org/change-tracking-action@v1',
    '- name: Show it',
    '  env:',
    '    CHANGE: ${{ steps.read.outputs.change }}',
    '  run: |',
    '    echo "$CHANGE" | jq .',
    "    echo '${{ steps.read.outputs.change }}' | jq .",
    '```',
    ''
  ].join('\n')

  it('finds an expression inside a run: script, and gives its README line', () => {
    const [block] = yamlBlocks(markdown)
    expect(scriptInjections(block.text, 'README.md', block.line)).toEqual([
      {
        where: 'README.md:11 (step Show it)',
        expressions: ['${{ steps.read.outputs.change }}']
      }
    ])
  })

  it('accepts the same value passed through env:', () => {
    const safe = markdown.replace("    echo '${{ steps.read.outputs.change }}' | jq .\n", '')
    const [block] = yamlBlocks(safe)
    expect(scriptInjections(block.text, 'README.md', block.line)).toEqual([])
  })

  it('finds it in a job of a whole workflow, in a one-line run:', () => {
    const workflow = [
      'on: push',
      'jobs:',
      '  deploy:',
      '    runs-on: ubuntu-latest',
      '    steps:',
      '      - run: echo ${{ github.event.head_commit.message }}'
    ].join('\n')
    expect(scriptInjections(workflow, 'ci.yml')).toEqual([
      {
        where: 'ci.yml:6 (step 1)',
        expressions: ['${{ github.event.head_commit.message }}']
      }
    ])
  })
})
