/**
 * The command line's bundle as a process, under the machine's own Node, in a hostile checkout: a
 * partial clone that lacks a commit, whose promisor remote a lazy fetch would reach by running the
 * repository's own core.sshCommand. An environment whose GIT_DIR names another repository:
 * cli/ci-context.test.ts and shipped/git-lookup.test.ts, in process.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { cliEntry } from '../support/bundle.ts'
import { gitEnv } from '../support/git-repository.ts'
import { partialClone } from '../shipped/partial-clone.ts'

/** The machine's own Node, the first on PATH that is not the project's; else this one. */
const NODE =
  (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter(folder => folder !== '' && !folder.includes('node_modules'))
    .map(folder => join(folder, 'node'))
    .find(path => existsSync(path)) ?? process.execPath

let root: string
let entry: string
let env: Record<string, string>
let partial: ReturnType<typeof partialClone>
const marker = () => join(root, 'fetched')

beforeAll(async () => {
  entry = await cliEntry()
  root = realpathSync(mkdtempSync(join(tmpdir(), 'cta-partial-clone-')))
  mkdirSync(join(root, 'home'))
  env = {
    ...gitEnv(join(root, 'home')),
    // A key no word of the output holds: the report redacts it wherever it occurs.
    CHANGE_TRACKING_API_KEY: 'partial-clone-test-key',
    CHANGE_TRACKING_BASE_URL: 'https://api.example.com'
  }
  partial = partialClone(join(root, 'partial'), env, `touch '${marker()}'; false`)
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** `change-tracking ARGS` in the partial clone: its exit status and what it printed. */
function cli(args: string[], extra: Record<string, string> = {}) {
  return new Promise<{ status: unknown; stdout: string; stderr: string }>(resolve =>
    execFile(
      NODE,
      [entry, ...args],
      { cwd: partial.repo.path, env: { ...env, ...extra }, timeout: 20_000 },
      (error, stdout, stderr) => resolve({ status: error ? error.code : 0, stdout, stderr })
    )
  )
}

const warnings = (stderr: string) => stderr.split('\n').filter(line => line.startsWith('warning:'))

it('records a change from a partial clone without fetching what it lacks: one warning', async () => {
  const [first, , last] = partial.commits
  const run = await cli(['change', '--dry-run', '--previous-version', first])
  expect(existsSync(marker())).toBe(false)
  expect(run.status).toBe(0)
  expect(warnings(run.stderr)).toEqual([expect.stringContaining('git merge-base failed: "')])
  expect(run.stderr).toContain(`"version":"${last}"`)
  expect(run.stderr).toMatch(/commits_complete\\+":false/)
})
