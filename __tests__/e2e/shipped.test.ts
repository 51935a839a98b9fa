/**
 * What a change ships, end to end: the bundled action as a process against the emulator and the
 * fake GitHub API. The lookup's findings in the change, its outputs, log and summary, and the
 * token's secrecy; the checkout read instead (include-commits: git), a chunk of its own; a
 * failure that echoes the token never fails the step; the toolkit's proxy rules as the bundle
 * applies them; and a cancel while the lookup runs. Exact counts over every compare page, the
 * push payload without a token, a failed later page, rollbacks, include-commits false and the
 * dry run are proven in process (shipped/*.test.ts, commands/shipped.test.ts, main.test.ts).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { Emulator } from '../../emulator/emulator.ts'
import { FakeGitHub, GitHubFaults, type GitHubCommit } from '../../emulator/github.ts'
import { testCertificate, TEST_SERVICE_HOST } from '../../emulator/tls.ts'
import { startConnectProxy } from '../support/connect-proxy.ts'
import { actionAgainst, type ActionRun } from '../support/run-action.ts'
import { renderSummary } from '../support/summary.ts'
import { gitEnv, TestRepository } from '../support/git-repository.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const TOKEN = 'ghs_e2eToken0123456789abcdef'
const REPOSITORY = 'octo-org/octo-repo'
const RUN_ID = '9876543210'
/** The stated bound on GitHub API calls per run. */
const MAX_API_CALLS = 12

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

/** The run before this one deployed commit 5; this one, in progress, deploys commit 9. */
const RUNS = [
  { id: 100, workflow_id: 77, head_branch: 'main', head_sha: sha(5) },
  {
    id: Number(RUN_ID),
    workflow_id: 77,
    head_branch: 'main',
    head_sha: sha(9),
    status: 'in_progress'
  }
]

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
  github.repository = { fullName: REPOSITORY, commits: history(12), runs: RUNS, pulls: [] }
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

const warningsOf = (run: ActionRun): string[] =>
  run.stdout.split('\n').filter(line => line.startsWith('::warning::'))

it('records what the lookup found in the change, its outputs, its log line and its summary, the token sent to the API alone and never printed', async () => {
  const run = await deploy(sha(9))
  expect(run.exitCode).toBe(0)
  expect(run.outputs).toMatchObject({
    'previous-version': sha(5),
    'commit-count': '4',
    'compare-url': `https://github.com/${REPOSITORY}/compare/${sha(5)}...${sha(9)}`,
    rollback: 'false'
  })
  expect(metadataOf(run)).toMatchObject({
    previous_sha: sha(5),
    commit_count: 4,
    commits: [
      { sha: sha(6) },
      { sha: sha(7) },
      { sha: sha(8) },
      { sha: sha(9), message: 'Change 9 (#9)' }
    ],
    pull_requests: [{ number: 6 }, { number: 9 }],
    run_started_at: expect.any(String),
    lead_time_seconds: {
      median: expect.any(Number),
      max: expect.any(Number),
      commits: 4,
      dropped: 0
    }
  })
  expect(String(emulator.changes.get(run.outputs['change-id'])?.description)).toMatch(
    /4 commits since 0000000/
  )
  expect(run.stdout).toContain(
    `What the change ships: previous deploy ${sha(5)} (from workflow-run), 4 commits`
  )
  expect(run.summary).toContain('Commits \\(4\\)')
  expect(renderSummary(run.summary).links).toContainEqual({
    text: `${sha(5).slice(0, 7)}…${sha(9).slice(0, 7)}`,
    href: run.outputs['compare-url']
  })
  expect(github.requests.length).toBeLessThanOrEqual(MAX_API_CALLS)
  // The token goes only to the API, in its Authorization header, and is never printed.
  for (const request of github.requests)
    expect(request.headers.authorization).toBe(`token ${TOKEN}`)
  for (const request of emulator.requestsTo('POST /v2/change')) {
    expect(JSON.stringify(request.headers)).not.toContain(TOKEN)
    expect(request.body).not.toContain(TOKEN)
  }
  expect(printedBesidesMasking(run)).not.toContain(TOKEN)
  expect(run.stdout).toContain(`::add-mask::${TOKEN}`)
})

describe('a lookup that fails never fails the step', () => {
  // Other failures (a reset, a later page, no token): shipped/lookup.test.ts, in process.
  it('on a refused token GitHub echoes back: one warning, the change recorded, exit 0 under fail-on-error true', async () => {
    github.inject(
      'GET /repos/*/*/compare/*',
      { status: 401, body: JSON.stringify({ message: `Bad credentials: ${TOKEN}` }) },
      Infinity
    )
    const run = await deploy(sha(9), { 'previous-version': sha(5) })
    expect(run.exitCode).toBe(0)
    expect(run.outputs['change-id']).toBeTruthy()
    expect(warningsOf(run)).toHaveLength(1)
    expect(run.outputs['commit-count']).toBe('')
    expect(printedBesidesMasking(run)).not.toContain(TOKEN)
  })
})

// What git-lookup proves in process (main.test.ts: include-commits: git), here through its lazily
// loaded chunk of the bundle.
it('reads the runner’s checkout instead of the API with include-commits: git', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'cta-e2e-git-'))
  try {
    const repo = new TestRepository(join(folder, 'octo-repo'), gitEnv(folder))
    const first = repo.commit('Initial commit', { 'README.md': '# Octo\n' })
    const head = repo.commit('Add login (#41)', { 'src/login.ts': 'export {}\n' })
    repo.git(['remote', 'add', 'origin', `https://github.com/${REPOSITORY}`])
    const run = await deploy(
      head,
      { 'include-commits': 'git', 'previous-version': first },
      'push',
      {},
      {
        GITHUB_WORKSPACE: repo.path
      }
    )
    expect(run.exitCode).toBe(0)
    expect(github.requests).toEqual([])
    expect(metadataOf(run)).toMatchObject({
      source: 'git',
      previous_sha: first,
      commit_count: 1,
      pull_requests: [
        { number: 41, title: 'Add login', url: `https://github.com/${REPOSITORY}/pull/41` }
      ]
    })
    expect(run.outputs['compare-url']).toBe(
      `https://github.com/${REPOSITORY}/compare/${first}...${head}`
    )
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
})

describe("the toolkit's proxy rules, in the bundle", () => {
  /** GITHUB_API_URL at a name only the proxy can reach (it routes it to the fake). */
  const apiUrl = (): string => `https://${TEST_SERVICE_HOST}:${github.port}`

  it('tunnels through HTTPS_PROXY with its credentials, which never show', async () => {
    const proxy = await startConnectProxy({
      route: () => ({ host: '127.0.0.1', port: github.port })
    })
    try {
      const HTTPS_PROXY = proxy.url.replace('http://', 'http://user:pr0xy-pass@')
      const run = await deploy(
        sha(9),
        { 'previous-version': sha(5) },
        'workflow_dispatch',
        {},
        { GITHUB_API_URL: apiUrl(), HTTPS_PROXY }
      )
      expect(warningsOf(run)).toEqual([])
      expect(run.outputs['commit-count']).toBe('4')
      expect(proxy.connects).toEqual([`${TEST_SERVICE_HOST}:${github.port}`])
      expect(proxy.proxyAuthorizations).toEqual([
        `Basic ${Buffer.from('user:pr0xy-pass').toString('base64')}`
      ])
      expect(printedBesidesMasking(run)).not.toContain('pr0xy-pass')
    } finally {
      await proxy.close()
    }
  })

  it('names the proxy by its host and port when it refuses the tunnel', async () => {
    const proxy = await startConnectProxy({ refuseWith: 403 })
    try {
      const run = await deploy(
        sha(9),
        { 'previous-version': sha(5) },
        'workflow_dispatch',
        {},
        { GITHUB_API_URL: apiUrl(), HTTPS_PROXY: proxy.url }
      )
      expect(warningsOf(run)).toEqual([
        expect.stringContaining(
          `the proxy 127.0.0.1:${proxy.port} answered HTTP 403 to the tunnel for GET /repos/`
        )
      ])
    } finally {
      await proxy.close()
    }
  })

  it('goes direct to a host in NO_PROXY', async () => {
    const proxy = await startConnectProxy({
      route: () => ({ host: '127.0.0.1', port: github.port })
    })
    try {
      const env = { GITHUB_API_URL: apiUrl(), HTTPS_PROXY: proxy.url, NO_PROXY: TEST_SERVICE_HOST }
      const run = await deploy(sha(9), { 'previous-version': sha(5) }, 'workflow_dispatch', {}, env)
      // Direct, the name does not resolve: the failure proves the proxy was not used.
      expect(warningsOf(run)).toEqual([expect.stringContaining('failed with ENOTFOUND')])
      expect(proxy.connects).toEqual([])
    } finally {
      await proxy.close()
    }
  })
})

describe('a cancel while the lookup runs', () => {
  const DISPATCH = { eventName: 'workflow_dispatch', payload: {} }
  /**
   * Runs the deploy, sending `signal` once the call that hangs has come: the compare (the lookup
   * is under way) unless told the change's.
   */
  async function cancelled(
    signal: NodeJS.Signals,
    inputs: Record<string, string> = {},
    event: { eventName: string; payload: unknown } = DISPATCH,
    hangs: 'compare' | 'change' = 'compare'
  ) {
    if (hangs === 'compare') github.inject('GET /repos/*/*/compare/*', GitHubFaults.hang, Infinity)
    else emulator.inject('POST /v2/change', { hang: true })
    const arrived = (): boolean =>
      hangs === 'compare'
        ? github.requests.some(r => r.path.includes('/compare/'))
        : emulator.requests.length > 0
    let signalledAt = 0
    const run = await action(
      { 'github-token': TOKEN, 'include-commits': 'true', ...inputs },
      {
        ...event,
        env: { GITHUB_SHA: sha(9), GITHUB_API_URL: github.url, GITHUB_RUN_ID: RUN_ID },
        onSpawn: child => {
          const started = performance.now()
          const poll = setInterval(() => {
            if (arrived()) {
              clearInterval(poll)
              signalledAt = performance.now() - started
              child.kill(signal)
            }
          }, 10)
        }
      }
    )
    return { run, signalledAt }
  }

  it('on SIGTERM exits within 2 s, naming what was in flight', async () => {
    const { run, signalledAt } = await cancelled('SIGTERM')
    expect(run.exitCode).toBe(143)
    expect(run.exitAtMs - signalledAt).toBeLessThan(2000)
    expect(run.outputs['error']).toMatch(/cancelled \(SIGTERM\)/)
  })

  describe('when GitHub and the push bring a megabyte of text like "a.a.…a://x"', () => {
    // Each "." is a word boundary where a URL pattern could start again; the password must go.
    const hostile = `https://bot:pw-0123@h/ ${'a.'.repeat(512 * 1024)}a://x`
    const push = {
      eventName: 'push',
      payload: {
        ref: 'refs/heads/main',
        before: sha(5),
        after: sha(9),
        commits: [{ id: sha(9), message: 'Ship', author: { name: hostile } }]
      }
    }
    const forbidden = { status: 403, body: JSON.stringify({ message: hostile }) }

    /** The deploy of that push, `signal` sent once the call that `hangs` has come. */
    async function hostileRun(signal: NodeJS.Signals, hangs: 'compare' | 'change') {
      // The deployments rule is refused in those words, before the call that hangs.
      github.inject('GET /repos/*/*/deployments', forbidden, Infinity)
      const { run, signalledAt } = await cancelled(
        signal,
        { environment: 'production' },
        push,
        hangs
      )
      expect(signalledAt).toBeGreaterThan(0)
      expect(printedBesidesMasking(run).includes('pw-0123')).toBe(false)
      expect(emulator.requests.some(request => request.body.includes('pw-0123'))).toBe(false)
      return { run, signalledAt }
    }

    it('SIGINT while the lookup waits stops it at once, records the change with what it knows, then exits 130', async () => {
      const { run, signalledAt } = await hostileRun('SIGINT', 'compare')
      expect(run.exitCode).toBe(130)
      // Well before the runner's SIGTERM, 7.5 s after its SIGINT.
      expect(run.exitAtMs - signalledAt).toBeLessThan(7500)
      expect(emulator.changes.size).toBe(1)
      expect(run.outputs['change-id']).toMatch(/\S/)
      expect(run.stdout).toMatch(/::warning::The run was cancelled \(SIGINT\)/)
    })

    it('SIGTERM while the change is sent is honoured as ever', async () => {
      const { run, signalledAt } = await hostileRun('SIGTERM', 'change')
      expect(run.exitCode).toBe(143)
      expect(run.exitAtMs - signalledAt).toBeLessThan(2000)
      expect(emulator.changes.size).toBe(0)
    })
  })
})
