/**
 * The command line in process, against the emulator, in a GitLab job's real checkout: what shipped
 * is read from the history, sent under custom_metadata.git beside the CI's own `ci`, and hostile
 * history stays inert on standard error, in --json, and in the --outputs and --summary files.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Emulator } from '../../emulator/emulator.ts'
import { main } from '../../src/cli/main.ts'
import { gitEnv, TestRepository } from '../support/git-repository.ts'
import { renderSummary } from '../support/summary.ts'
import { useEmulator } from '../support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => (emulator = started))

const HOSTILE =
  'Fix ::error::x\u2028::warning::y\u0007 [x](https://evil.example) <b>b</b>\u001b[31m'
const HOSTILE_PATH = 'hostile/\u0007bell\n::error::line\u2028[x](evil.example).txt'
/** A control character other than a line break, or a Unicode line or paragraph separator. */
const UNSAFE = /[^\P{Cc}\n]|[\u2028\u2029]/u

let root: string
let repo: TestRepository
let first: string
let head: string
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'cta-cli-main-')))
  repo = new TestRepository(join(root, 'shop'), gitEnv(root))
  first = repo.commit('Initial commit', { 'README.md': '# Shop\n' })
  repo.commit('Add the orders table', { 'db/migrations/002_orders.sql': 'create;\n' })
  head = repo.commit(`${HOSTILE}\n\n::set-output name=x::y`, { [HOSTILE_PATH]: 'x\n' }, HOSTILE)
  repo.git([
    'remote',
    'add',
    'origin',
    'https://gitlab-ci-token:s3cret@gitlab.example.com/acme/shop'
  ])
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('change-tracking change, in a GitLab job’s checkout', () => {
  it('sends what shipped under git, the CI’s fields under ci, and keeps hostile history inert', async () => {
    const stderr: string[] = []
    let stdout = ''
    const files = { outputs: join(root, 'outputs.env'), summary: join(root, 'summary.md') }
    const env = {
      ...gitEnv(root),
      GITLAB_CI: 'true',
      CI_SERVER_URL: 'https://gitlab.example.com',
      CI_PROJECT_PATH: 'acme/shop',
      CI_COMMIT_SHA: head,
      CI_COMMIT_BEFORE_SHA: first,
      CI_PIPELINE_ID: '42',
      CHANGE_TRACKING_API_KEY: emulator.apiKey
    }
    const args = ['change', '--base-url', emulator.url, '--json', '--outputs', files.outputs]
    const status = await main(
      [
        ...args,
        '--summary',
        files.summary,
        '--risk-paths',
        'migration: db/**\nhostile: hostile/**'
      ],
      env,
      {
        stdout: text => (stdout += text),
        stderr: line => stderr.push(line),
        cwd: repo.path
      }
    )
    expect(status).toBe(0)
    const [change] = [...emulator.changes.values()]
    const metadata = JSON.parse(String(change.custom_metadata)) as Record<string, object>
    expect(metadata['ci']).toEqual({ provider: 'gitlab', build_number: '42', branch: 'main' })
    expect(metadata['git']).toMatchObject({
      source: 'git',
      previous_push_sha: first,
      commit_count: 2,
      compare_url: `https://gitlab.example.com/acme/shop/-/compare/${first}...${head}`,
      risk: { migration: ['db/migrations/002_orders.sql'], hostile: [HOSTILE_PATH] }
    })
    expect(change.labels).toBe('risk:migration,risk:hostile')
    expect(stderr).toContain(
      `What the change ships: previous push ${first} (from previous-push), 2 commits, https://gitlab.example.com/acme/shop/-/compare/${first}...${head}, read from the checkout.`
    )

    const outputs = readFileSync(files.outputs, 'utf8')
    const summary = readFileSync(files.summary, 'utf8')
    expect(summary).toContain('::error&#58;:x') // the hostile commit is there, made inert
    for (const text of [...stderr, stdout, outputs, summary]) {
      expect(text).not.toMatch(UNSAFE)
      expect(text.split('\n').some(line => line.trimStart().startsWith('::'))).toBe(false)
      expect(text).not.toContain('s3cret')
    }
    expect(renderSummary(summary).links.filter(link => link.href.includes('evil'))).toEqual([])
  })
})
