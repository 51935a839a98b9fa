/**
 * What a change ships, end to end: the bundled action as a process, against the emulator and the
 * fake GitHub REST API. Each rule that finds the previous deploy, a rollback, a long range, every
 * fault of the API (never failing the step), GitHub Enterprise Server, and the token's secrecy.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { Emulator } from '../../emulator/emulator.ts'
import { FakeGitHub, GitHubFaults, type GitHubCommit } from '../../emulator/github.ts'
import { testCertificate } from '../../emulator/tls.ts'
import { actionAgainst, type ActionRun } from '../support/run-action.ts'

const TOKEN = 'ghs_e2eToken0123456789abcdef'
const REPOSITORY = 'octo-org/octo-repo'
const RUN_ID = '9876543210'
/** The stated bound on GitHub API calls per run. */
const MAX_API_CALLS = 6

/** A SHA that reads as its number: commit 7 is 0000…0007. */
const sha = (n: number): string => n.toString(16).padStart(40, '0')

/** A history of `count` commits: every third a squash merge of a pull request. */
function history(count: number): GitHubCommit[] {
  return Array.from({ length: count }, (_, i) => ({
    sha: sha(i + 1),
    message: i % 3 === 2 ? `Change ${i + 1} (#${i + 1})\n\nDetails` : `Change ${i + 1}`,
    author: i % 2 === 0 ? { name: 'Alice', login: 'alice' } : { name: 'Bob Builder' },
    files: [{ filename: i % 2 === 0 ? `services/api/f${i}.ts` : `apps/web/f${i}.ts` }]
  }))
}

let emulator: Emulator
let github: FakeGitHub
let certPath: string
let action: ReturnType<typeof actionAgainst>

beforeAll(async () => {
  certPath = (await testCertificate()).certPath
  emulator = await Emulator.start()
  github = await FakeGitHub.start({
    token: TOKEN,
    repository: { fullName: REPOSITORY, commits: history(12) }
  })
  action = actionAgainst(emulator, certPath)
})
afterAll(async () => {
  await Promise.all([emulator.close(), github.close()])
})
beforeEach(() => {
  emulator.reset()
  github.reset()
  github.repository = { fullName: REPOSITORY, commits: history(12), pulls: [] }
})

/** Runs the change command at `version`, with the token, against the fake API. */
function deploy(
  version: string,
  inputs: Record<string, string> = {},
  eventName = 'workflow_dispatch',
  payload: unknown = {},
  env: Record<string, string> = {}
): Promise<ActionRun> {
  return action(
    { 'github-token': TOKEN, 'include-commits': 'true', 'fail-on-error': 'true', ...inputs },
    {
      eventName,
      payload,
      env: { GITHUB_SHA: version, GITHUB_API_URL: github.url, GITHUB_RUN_ID: RUN_ID, ...env }
    }
  )
}

function metadataOf(run: ActionRun): Record<string, unknown> {
  const stored = emulator.changes.get(run.outputs['change-id'])
  return (JSON.parse(String(stored?.custom_metadata)) as { github: Record<string, unknown> }).github
}

/** Everything the run printed or wrote, but the line that asks the runner to mask the token. */
function printedBesidesMasking(run: ActionRun): string {
  const stdout = run.stdout
    .split('\n')
    .filter(line => !line.startsWith('::add-mask::'))
    .join('\n')
  return `${stdout}${run.stderr}${run.summary}${JSON.stringify(run.outputs)}`
}

function descriptionOf(run: ActionRun): string {
  return String(emulator.changes.get(run.outputs['change-id'])?.description)
}

describe('the previous deploy', () => {
  it('is the payload’s before on a push with no token, with the payload’s commits and no API call', async () => {
    const payload = {
      ref: 'refs/heads/main',
      before: sha(9),
      after: sha(12),
      compare: `https://github.com/${REPOSITORY}/compare/${sha(9).slice(0, 12)}...${sha(12).slice(0, 12)}`,
      commits: [10, 11, 12].map(n => ({
        id: sha(n),
        message: n === 12 ? 'Fix cart (#42)' : `Change ${n}`,
        author: { name: 'Alice', username: 'alice' }
      })),
      head_commit: { id: sha(12), message: 'Fix cart (#42)' }
    }
    const run = await deploy(sha(12), { 'github-token': '' }, 'push', payload)
    expect(run.exitCode).toBe(0)
    expect(github.requests).toHaveLength(0)
    expect(run.outputs['previous-version']).toBe(sha(9))
    expect(run.outputs['commit-count']).toBe('3')
    // Built from the server's URL, never taken from the payload.
    expect(run.outputs['compare-url']).toBe(
      `https://github.com/${REPOSITORY}/compare/${sha(9)}...${sha(12)}`
    )
    expect(metadataOf(run)).toMatchObject({
      previous_sha: sha(9),
      commit_count: 3,
      commits: [{ sha: sha(10) }, { sha: sha(11) }, { sha: sha(12), message: 'Fix cart (#42)' }],
      pull_requests: [{ number: 42 }]
    })
    expect(descriptionOf(run)).toContain('3 commits since 0000000')
  })

  it('is the newest earlier successful deployment to the environment on deployment_status', async () => {
    github.repository.deployments = [
      { id: 1, sha: sha(4), environment: 'production', statuses: ['in_progress', 'success'] },
      { id: 2, sha: sha(6), environment: 'production', statuses: ['failure'] },
      { id: 3, sha: sha(8), environment: 'staging', statuses: ['success'] },
      { id: 4, sha: sha(10), environment: 'production', statuses: ['success'] }
    ]
    const payload = {
      deployment: { id: 4, sha: sha(10), environment: 'production' },
      deployment_status: { state: 'success', environment: 'production' }
    }
    const run = await deploy(sha(10), {}, 'deployment_status', payload)
    expect(run.exitCode).toBe(0)
    expect(run.outputs['previous-version']).toBe(sha(4))
    expect(run.outputs['commit-count']).toBe('6')
    expect(run.outputs['rollback']).toBe('false')
    expect(github.requests.length).toBeLessThanOrEqual(MAX_API_CALLS)
    expect(descriptionOf(run)).toMatch(/to production: 6 commits since 0000000/)
  })

  it('is the newest earlier successful run of the same workflow on the branch otherwise', async () => {
    github.repository.runs = [
      { id: 100, workflow_id: 77, head_branch: 'main', head_sha: sha(5) },
      { id: 101, workflow_id: 77, head_branch: 'main', head_sha: sha(7), conclusion: 'failure' },
      { id: 102, workflow_id: 77, head_branch: 'dev', head_sha: sha(8) },
      {
        id: Number(RUN_ID),
        workflow_id: 77,
        head_branch: 'main',
        head_sha: sha(9),
        status: 'in_progress'
      }
    ]
    const run = await deploy(sha(9))
    expect(run.exitCode).toBe(0)
    expect(run.outputs['previous-version']).toBe(sha(5))
    expect(run.outputs['commit-count']).toBe('4')
    expect(metadataOf(run)).toMatchObject({ previous_sha: sha(5), commit_count: 4 })
    expect(metadataOf(run)['run_started_at']).toEqual(expect.any(String))
  })

  it('is the previous published release’s tag on a release', async () => {
    github.repository.refs = { 'v1.0.0': sha(3), 'v1.1.0': sha(8) }
    github.repository.releases = [
      { tag_name: 'v1.0.0', target_commitish: sha(3) },
      { tag_name: 'v1.0.1-draft', target_commitish: sha(5), draft: true, published_at: null },
      { tag_name: 'v1.1.0', target_commitish: sha(8) }
    ]
    const payload = { action: 'published', release: { tag_name: 'v1.1.0', name: 'v1.1.0' } }
    const run = await deploy(sha(8), {}, 'release', payload)
    expect(run.exitCode).toBe(0)
    expect(run.outputs['previous-version']).toBe(sha(3))
    expect(run.outputs['commit-count']).toBe('5')
  })

  it('is previous-version when given, a tag resolved to its SHA', async () => {
    github.repository.refs = { 'v0.9': sha(2) }
    const run = await deploy(sha(6), { 'previous-version': 'v0.9' })
    expect(run.exitCode).toBe(0)
    expect(run.outputs['previous-version']).toBe(sha(2))
    expect(run.outputs['commit-count']).toBe('4')
  })
})

it('says plainly when a deploy is a rollback', async () => {
  const run = await deploy(sha(3), { 'previous-version': sha(9), environment: 'production' })
  expect(run.exitCode).toBe(0)
  expect(run.outputs['rollback']).toBe('true')
  expect(metadataOf(run)['rollback']).toBe(true)
  expect(descriptionOf(run)).toMatch(
    /^Rollback octo-org\/octo-repo to 0000000 in production \(was 0000000\)/
  )
})

it('counts a 600-commit range exactly, caps its lists, and stays within the call budget', async () => {
  github.repository.commits = history(601)
  const run = await deploy(sha(601), { 'previous-version': sha(1) })
  expect(run.exitCode).toBe(0)
  expect(run.outputs['commit-count']).toBe('600')
  const metadata = metadataOf(run)
  expect(metadata['commit_count']).toBe(600)
  expect(metadata['lead_time_seconds']).toEqual({
    median: expect.any(Number),
    max: expect.any(Number)
  })
  expect((metadata['commits'] as unknown[]).length).toBeLessThanOrEqual(50)
  expect((metadata['pull_requests'] as unknown[]).length).toBeLessThanOrEqual(20)
  expect(
    String(emulator.changes.get(run.outputs['change-id'])?.custom_metadata).length
  ).toBeLessThan(32 * 1024)
  expect(github.requests.length).toBeLessThanOrEqual(MAX_API_CALLS)
  expect(run.summary).toContain('Commits \\(the newest 50 of 600\\)')
})

it('keeps the count and the files of the first compare page when the last page fails', async () => {
  github.repository.commits = history(601)
  github.inject('GET /repos/*/*/compare/*?page=3', GitHubFaults.badGateway, Infinity)
  const run = await deploy(sha(601), { 'previous-version': sha(1) })
  expect(run.exitCode).toBe(0)
  expect(run.outputs['change-id']).toBeTruthy()
  expect(run.outputs['commit-count']).toBe('600')
  expect(metadataOf(run)['commit_count']).toBe(600)
  const warnings = run.stdout.split('\n').filter(line => line.startsWith('::warning::'))
  expect(warnings).toHaveLength(1)
  expect(warnings[0]).toContain(`GET /repos/${REPOSITORY}/compare/`)
  expect(warnings[0]).toContain('answered HTTP 502')
  expect(warnings[0]).toContain('recorded with what was found')
  expect(github.requestsTo('GET /repos/*/*/compare/*')).toHaveLength(2)
})

describe('a lookup that fails never fails the step', () => {
  it.each([
    ['401 bad credentials', GitHubFaults.badCredentials],
    ['403 rate limit', GitHubFaults.rateLimited],
    ['403 missing permission', GitHubFaults.forbidden],
    ['404 (a force-pushed SHA)', GitHubFaults.notFound],
    ['an HTML page', GitHubFaults.html],
    ['a reset', GitHubFaults.reset]
  ])(
    'on %s: the change is recorded with one warning, exit 0 under fail-on-error true',
    async (_, fault) => {
      github.inject('GET /repos/*/*/compare/*', fault, Infinity)
      const run = await deploy(sha(9), { 'previous-version': sha(5) })
      expect(run.exitCode).toBe(0)
      expect(run.outputs['change-id']).toBeTruthy()
      const warnings = run.stdout.split('\n').filter(line => line.startsWith('::warning::'))
      expect(warnings).toHaveLength(1)
      expect(run.outputs['commit-count']).toBe('')
      expect(printedBesidesMasking(run)).not.toContain(TOKEN)
    },
    30_000
  )
})

it('works on GitHub Enterprise Server, whose API is below /api/v3', async () => {
  const ghes = await FakeGitHub.start({
    token: TOKEN,
    prefix: '/api/v3',
    repository: { fullName: REPOSITORY, commits: history(6) }
  })
  try {
    const run = await deploy(
      sha(6),
      { 'previous-version': sha(2) },
      'workflow_dispatch',
      {},
      {
        GITHUB_API_URL: ghes.url,
        GITHUB_SERVER_URL: 'https://ghes.example.com'
      }
    )
    expect(run.exitCode).toBe(0)
    expect(run.outputs['commit-count']).toBe('4')
    expect(run.outputs['compare-url']).toMatch(
      /^https:\/\/ghes\.example\.com\/octo-org\/octo-repo\/compare\//
    )
    expect(ghes.requests.every(request => request.path.startsWith('/api/v3/'))).toBe(true)
  } finally {
    await ghes.close()
  }
})

it('sends the token only to the API, in its Authorization header, and never prints it', async () => {
  const run = await deploy(sha(9), { 'previous-version': sha(5), 'heartbeat-id': '' })
  expect(github.requests.length).toBeGreaterThan(0)
  for (const request of github.requests)
    expect(request.headers.authorization).toMatch(new RegExp(`${TOKEN}$`))
  for (const request of emulator.requestsTo('POST /v2/change')) {
    expect(JSON.stringify(request.headers)).not.toContain(TOKEN)
    expect(request.body).not.toContain(TOKEN)
  }
  expect(printedBesidesMasking(run)).not.toContain(TOKEN)
  expect(run.stdout).toContain(`::add-mask::${TOKEN}`)
})

it('makes no GitHub API call with include-commits false', async () => {
  const run = await deploy(sha(9), { 'include-commits': 'false', 'previous-version': sha(5) })
  expect(run.exitCode).toBe(0)
  expect(github.requests).toHaveLength(0)
  expect(run.outputs['previous-version']).toBe('')
  expect(run.outputs['rollback']).toBe('false')
})

it('shows on dry-run what the lookup found and the change it would send, and sends nothing', async () => {
  const run = await deploy(sha(9), { 'previous-version': sha(5), 'dry-run': 'true' })
  expect(run.exitCode).toBe(0)
  expect(emulator.requestsTo('POST /v2/change')).toHaveLength(0)
  expect(run.stdout).toContain(
    `What the change ships: previous deploy ${sha(5)} (from input), 4 commits`
  )
  expect(run.stdout).toMatch(/\[dry-run\] POST https:\/\/localhost:\d+\/v2\/change/)
  expect(run.stdout).toContain('"commit_count\\":4')
})
