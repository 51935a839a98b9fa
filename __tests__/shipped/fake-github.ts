/**
 * The lookup's tests against the one fake of GitHub's API (emulator/github.ts): a loopback HTTPS
 * server this process trusts, reached directly (the proxy variables are cleared before the toolkit
 * loads), a repository to serve, and the lookup's options for it.
 */
import { afterAll, beforeAll, beforeEach } from '@jest/globals'
import {
  FakeGitHub,
  type GitHubCommit,
  type GitHubRepository,
  type GitHubWorkflowRun
} from '../../emulator/github.ts'
import { trustTestCertificate } from '../../emulator/tls.ts'
import { openGitHub, type GitHub } from '../../src/shipped/github-client.ts'
import type { LookupOptions, LookupQuery } from '../../src/shipped/types.ts'

export const TOKEN = 'ghs_T0kenThatMustNeverShow1234567890ab'
export const REPOSITORY = 'octo-org/octo-repo'
export const RUN_ID = '5000'
const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy']

/** A SHA that reads as its number: commit 7 is 0000…0007. */
export const sha = (n: number): string => n.toString(16).padStart(40, '0')

/** Commits 1 to `count`; every 5th (5, 10, …) a squash merge "Change n (#100+n)". */
export function history(count: number): GitHubCommit[] {
  return Array.from({ length: count }, (_, i) => ({
    sha: sha(i + 1),
    message: (i + 1) % 5 === 0 ? `Change ${i + 1} (#${101 + i})\n\nbody` : `Commit ${i + 1}`,
    author: i % 2 === 0 ? { name: `Dev ${i + 1}`, login: `dev${i + 1}` } : { name: `Dev ${i + 1}` },
    files: [{ filename: `src/f${i + 1}.ts` }]
  }))
}

/** This run: in progress, on main, at the version sha(12). */
export const THIS_RUN: GitHubWorkflowRun = {
  id: Number(RUN_ID),
  workflow_id: 7,
  head_branch: 'main',
  head_sha: sha(12),
  status: 'in_progress',
  run_started_at: '2026-03-01T10:00:05Z'
}

/** The fake for a test file; each test starts from `repository()`, with no faults and no log. */
export function useFakeGitHub(
  repository: () => Omit<GitHubRepository, 'fullName'> = () => ({ commits: history(12) })
): () => FakeGitHub {
  let github: FakeGitHub
  const saved = PROXY_VARIABLES.map(name => process.env[name])
  beforeAll(async () => {
    for (const name of PROXY_VARIABLES) delete process.env[name]
    const cert = await trustTestCertificate()
    github = await FakeGitHub.start({
      repository: { fullName: REPOSITORY, ...repository() },
      token: TOKEN,
      cert
    })
  })
  beforeEach(() => {
    github.reset()
    github.repository = { fullName: REPOSITORY, ...repository() }
  })
  afterAll(async () => {
    await github.close()
    PROXY_VARIABLES.forEach((name, i) => {
      if (saved[i] !== undefined) process.env[name] = saved[i]
    })
  })
  return () => github
}

export function lookupOptions(
  github: FakeGitHub,
  overrides: Partial<LookupOptions> = {}
): LookupOptions {
  return {
    token: TOKEN,
    apiUrl: github.url,
    serverUrl: 'https://github.com',
    repository: REPOSITORY,
    eventName: 'workflow_dispatch',
    payload: {},
    runId: RUN_ID,
    version: sha(12),
    budgetMs: 5000,
    advice: { tokenInput: 'github-token' },
    ...overrides
  }
}

/** The options as the lookup's stages read them. */
export function queryFor(github: FakeGitHub, overrides: Partial<LookupOptions> = {}): LookupQuery {
  const [owner, repo] = REPOSITORY.split('/')
  return { ...lookupOptions(github, overrides), repo: { owner, repo } }
}

/** A client of the fake for one test. */
export async function withGitHub<T>(
  github: FakeGitHub,
  use: (client: GitHub) => Promise<T>,
  options: { budgetMs?: number; maxCalls?: number } = {}
): Promise<T> {
  return use(await openGitHub({ ...lookupOptions(github), ...options }))
}
