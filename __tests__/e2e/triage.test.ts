/**
 * Triage end to end: the bundled action, at a job's end, against the emulator and the fake
 * GitHub API. The labels it adds and the issues, risk and remediation in the change's metadata,
 * read from what the lookup read, with no GitHub API call of their own.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from '@jest/globals'
import { Emulator } from '../../emulator/emulator.ts'
import { FakeGitHub, type GitHubCommit } from '../../emulator/github.ts'
import { testCertificate } from '../../emulator/tls.ts'
import { actionAgainst, type ActionRun } from '../support/run-action.ts'
import { renderSummary } from '../support/summary.ts'

const TOKEN = 'ghs_e2eTriageToken0123456789abcd'
const REPOSITORY = 'octo-org/octo-repo'
const sha = (n: number): string => n.toString(16).padStart(40, '0')

const ALICE = { name: 'Alice', login: 'alice' }
const COMMITS: GitHubCommit[] = [
  { sha: sha(1), message: 'Add a cache', files: [{ filename: 'src/cache.ts' }] },
  {
    sha: sha(2),
    message: 'Add the orders table (ENG-142)\n\nFixes #88',
    files: [{ filename: 'db/migrate/001_orders.rb' }]
  },
  {
    sha: sha(3),
    message: `Revert "Add a cache"\n\nThis reverts commit ${sha(1)}.`,
    files: [{ filename: 'src/cache.ts', status: 'removed' }]
  },
  { sha: sha(4), message: 'OPS-7 Bump express (#41)', files: [{ filename: 'package-lock.json' }] },
  { sha: sha(5), message: 'Deploy on tags', files: [{ filename: '.github/workflows/deploy.yml' }] }
].map(commit => ({ author: ALICE, ...commit }) as GitHubCommit)

let emulator: Emulator
let github: FakeGitHub
let action: ReturnType<typeof actionAgainst>

beforeAll(async () => {
  emulator = await Emulator.start()
  github = await FakeGitHub.start({
    token: TOKEN,
    repository: { fullName: REPOSITORY, commits: COMMITS }
  })
  action = actionAgainst(emulator, (await testCertificate()).certPath)
})
afterAll(async () => {
  await Promise.all([emulator.close(), github.close()])
})
beforeEach(() => {
  emulator.reset()
  github.reset()
  github.repository = { fullName: REPOSITORY, commits: COMMITS }
})

/** The main step, then the post step after a job that ended with `jobStatus`. */
async function deployJob(
  inputs: Record<string, string>,
  jobStatus = 'failure'
): Promise<ActionRun> {
  const all = {
    'github-token': TOKEN,
    'include-commits': 'true',
    'previous-version': sha(1),
    'record-at': 'job-end',
    labels: 'team:shop',
    ...inputs
  }
  const options = { env: { GITHUB_SHA: sha(5), GITHUB_API_URL: github.url } }
  const main = await action(all, options)
  return action({ ...all, 'job-status': jobStatus }, { ...options, state: main.state })
}

function recorded(): { labels?: string; metadata: Record<string, Record<string, unknown>> } {
  const [change] = emulator.changes.values()
  return { labels: change?.labels, metadata: JSON.parse(String(change?.custom_metadata)) }
}

it('labels a failed deploy with its outcome, remediation, risks and issues, and sends them in its metadata', async () => {
  const post = await deployJob({})
  expect(post.exitCode).toBe(0)
  const { labels, metadata } = recorded()
  expect(labels).toBe(
    'team:shop,outcome:failure,remediation:revert,risk:migration,risk:dependencies,risk:ci,issue:OPS-7,issue:ENG-142'
  )
  expect(metadata.github).toMatchObject({
    issues: ['OPS-7', 'ENG-142'],
    closes: ['#88'],
    risk: {
      migration: ['db/migrate/001_orders.rb'],
      dependencies: ['package-lock.json'],
      ci: ['.github/workflows/deploy.yml']
    },
    risk_complete: true
  })
  expect(metadata.remediation).toEqual({ type: 'revert', reverts: [sha(1)] })
  // The summary, as GitHub renders it: how it ended, then the triage block first.
  const summary = renderSummary(post.summary)
  expect(summary.title).toMatch(/^Deploy failed after \d+ s: change recorded$/)
  expect(summary.blocks[0]).toBe('Triage')
  const rows = summary.cells.join('\n')
  expect(rows).toContain(`Remediation\nrevert of ${sha(1).slice(0, 7)}`)
  expect(rows).toContain('Risk: migration\ndb/migrate/001_orders.rb')
  expect(rows).toContain('Issues\nOPS-7, ENG-142')
  expect(summary.links).toContainEqual({
    text: '#88',
    href: `https://github.com/${REPOSITORY}/issues/88`
  })
  expect(summary.cells.filter(cell => cell.length > 200)).toEqual([])
  // Read from what the lookup read: the compare alone.
  expect(github.requests.map(request => request.path)).toEqual([
    `/repos/${REPOSITORY}/compare/${sha(1)}...${sha(5)}?per_page=250&page=1`
  ])
})

it('adds no label with auto-labels false, still sends the metadata, and records the fix it is told of', async () => {
  await deployJob({ 'auto-labels': 'false', remediates: 'chg_41' }, 'success')
  const { labels, metadata } = recorded()
  expect(labels).toBe('team:shop')
  expect(metadata.remediation).toEqual({ type: 'fix', of: 'chg_41' })
  expect(metadata.github).toMatchObject({ issues: ['OPS-7', 'ENG-142'], risk_complete: true })
})

it('takes only the listed projects and the given risk categories', async () => {
  await deployJob({ 'issue-keys': 'eng', 'risk-paths': 'schema: db/**' }, 'success')
  const { labels, metadata } = recorded()
  expect(labels).toBe('team:shop,outcome:success,remediation:revert,risk:schema,issue:ENG-142')
  expect(metadata.github.risk).toEqual({ schema: ['db/migrate/001_orders.rb'] })
})

it('shows on dry-run the labels and metadata it would send', async () => {
  const post = await deployJob({ 'dry-run': 'true' })
  expect(emulator.changes.size).toBe(0)
  expect(post.stdout).toContain('outcome:failure,remediation:revert,risk:migration')
  expect(post.stdout).toContain('\\"issues\\":[\\"OPS-7\\",\\"ENG-142\\"]')
})
