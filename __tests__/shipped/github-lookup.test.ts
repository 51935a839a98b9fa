/**
 * The lookup as a whole: the stages composed into what a change ships, exact counts over every
 * compare page, the push payload without a token or when the API fails, one warning that keeps
 * whatever was found, the call bound, the time budget, a cancelled run, and GitHub Enterprise
 * Server's /api/v3.
 */
import { describe, expect, it } from '@jest/globals'
import { FakeGitHub, GitHubFaults, type GitHubCommit } from '../../emulator/github.ts'
import { testCertificate } from '../../emulator/tls.ts'
import { leadTime } from '../../src/lead-time.ts'
import { COMPARE_PAGE_SIZE } from '../../src/shipped/compare.ts'
import { MAX_API_CALLS } from '../../src/shipped/github-client.ts'
import { lookUpWithGitHub } from '../../src/shipped/github-lookup.ts'
import { shippedMetadata } from '../../src/shipped/metadata.ts'
import {
  history,
  lookupOptions,
  REPOSITORY,
  sha,
  THIS_RUN,
  TOKEN,
  useFakeGitHub
} from './fake-github.ts'

/** Commits 1 to 12, 11 a merge commit without its title; the run before this one deployed 9. */
const repository = () => ({
  commits: history(12).map(commit =>
    commit.sha === sha(11)
      ? { ...commit, message: 'Merge pull request #42 from acme/cart' }
      : commit
  ),
  runs: [{ id: 4998, workflow_id: 7, head_branch: 'main', head_sha: sha(9) }, THIS_RUN],
  pulls: [{ number: 42, title: 'Fix the cart' }]
})
const fake = useFakeGitHub(repository)

/** Commits 1 to `count`, each a squash merge of its own pull request #n. */
const squashMerges = (count: number): GitHubCommit[] =>
  history(count).map((commit, i) => ({ ...commit, message: `Change ${i + 1} (#${i + 1})` }))
const SERVER = `https://github.com/${REPOSITORY}`

const pushPayload = {
  before: sha(9),
  after: sha(12),
  commits: [10, 11, 12].map(n => ({
    id: sha(n),
    message: n === 12 ? 'Fix cart (#42)' : `Change ${n}`,
    author: { name: 'Alice', username: 'alice' },
    added: [`f${n}.ts`],
    modified: [],
    removed: []
  }))
}

describe('with a token', () => {
  it('composes the previous deploy, the range, its pull requests and files, and the run’s start', async () => {
    const result = await lookUpWithGitHub(lookupOptions(fake()))
    expect(result).toEqual({
      shipped: {
        previousSha: sha(9),
        source: 'workflow-run',
        compareUrl: `${SERVER}/compare/${sha(9)}...${sha(12)}`,
        commitCount: 3,
        commits: [
          {
            sha: sha(10),
            message: 'Change 10 (#110)',
            author: 'Dev 10',
            committedAt: expect.any(String)
          },
          {
            sha: sha(11),
            message: 'Merge pull request #42 from acme/cart',
            author: 'dev11',
            committedAt: expect.any(String)
          },
          { sha: sha(12), message: 'Commit 12', author: 'Dev 12', committedAt: expect.any(String) }
        ],
        // The merge commit's title is read from GitHub.
        pullRequests: [
          { number: 110, title: 'Change 10', url: `${SERVER}/pull/110` },
          { number: 42, title: 'Fix the cart', url: `${SERVER}/pull/42` }
        ],
        pullRequestCount: 2,
        pullRequestsComplete: true,
        messages: [
          'Change 10 (#110)\n\nbody',
          'Merge pull request #42 from acme/cart',
          'Commit 12'
        ],
        rollback: false,
        changedFiles: [{ path: 'src/f10.ts' }, { path: 'src/f11.ts' }, { path: 'src/f12.ts' }],
        changedFilesComplete: true,
        runStartedAt: '2026-03-01T10:00:05Z',
        apiCalls: 4
      }
    })
  })

  it('names a missing permission, and finds the previous deploy by the next rule', async () => {
    fake().inject('GET /repos/*/*/deployments', GitHubFaults.forbidden)
    const { shipped, warning } = await lookUpWithGitHub(
      lookupOptions(fake(), { environment: 'production' })
    )
    expect(shipped).toMatchObject({ source: 'workflow-run', commitCount: 3 })
    expect(warning).toBe(
      `Could not look up everything this change ships: GET /repos/${REPOSITORY}/deployments answered HTTP 403 ("Resource not accessible by integration"): the token may lack \`deployments: read\`; grant the workflow \`permissions:\` \`contents: read\`, \`actions: read\`, \`deployments: read\`. The change is recorded with what was found.`
    )
  })

  it('keeps the previous deploy when the compare fails, and says the commits are unknown', async () => {
    fake().inject('GET /repos/*/*/compare/*', GitHubFaults.notFound)
    const { shipped, warning } = await lookUpWithGitHub(
      lookupOptions(fake(), { previousVersion: sha(9) })
    )
    expect(shipped).toMatchObject({ previousSha: sha(9), source: 'input', apiCalls: 1 })
    expect(shipped.commitCount).toBeUndefined()
    expect(warning).toMatch(
      /a commit of the range is unknown .* recorded without the commits it ships\.$/
    )
  })

  it('reads no title after a later compare page failed, and keeps what page 1 said', async () => {
    fake().repository.commits = history(301).map(commit =>
      commit.sha === sha(300) ? { ...commit, message: 'Merge pull request #42 from a/b' } : commit
    )
    fake().inject('GET /repos/*/*/compare/*?page=2', GitHubFaults.badGateway)
    const { shipped, warning } = await lookUpWithGitHub(
      lookupOptions(fake(), { version: sha(301), previousVersion: sha(1) })
    )
    expect(shipped).toMatchObject({ commitCount: 300, apiCalls: 2 })
    expect(warning).toMatch(/answered HTTP 502 .*recorded with what was found\.$/)
  })

  it('stops at once when the run is cancelled, with what it found before', async () => {
    fake().repository.commits = history(601)
    fake().inject('GET /repos/*/*/compare/*?page=3', GitHubFaults.hang)
    const cancel = new AbortController()
    // Cancelled once page 3 hangs, whatever the machine's load.
    const watch = setInterval(() => {
      if (fake().requests.length < 2) return
      clearInterval(watch)
      cancel.abort()
    }, 5)
    const { shipped, warning } = await lookUpWithGitHub(
      lookupOptions(fake(), {
        version: sha(601),
        previousVersion: sha(1),
        budgetMs: 60_000,
        signal: cancel.signal
      })
    )
    // Page 1 was read and page 3 was in flight; nothing was asked after the cancel.
    expect(fake().requests).toHaveLength(2)
    expect(shipped).toMatchObject({ commitCount: 600, pullRequestsComplete: false, apiCalls: 2 })
    expect(shipped.commits).toHaveLength(COMPARE_PAGE_SIZE)
    expect(warning).toBe(
      `Could not look up everything this change ships: the run was cancelled before GET /repos/${REPOSITORY}/compare/${sha(1)}...${sha(601)} was answered. The change is recorded with what was found.`
    )
  })

  it('returns when its time budget runs out, with what it found before', async () => {
    fake().inject('GET /repos/*/*/compare/*', GitHubFaults.hang)
    const { shipped, warning } = await lookUpWithGitHub(
      lookupOptions(fake(), { previousVersion: sha(9), budgetMs: 200 })
    )
    // Whether the hanging call had started when the budget ran out depends on the machine's load.
    expect(shipped).toMatchObject({ previousSha: sha(9), source: 'input' })
    expect(warning).toContain("within the lookup's time budget of 0.2 s")
  })

  it('counts the pull requests of 1,000 commits exactly, over every compare page', async () => {
    fake().repository.commits = squashMerges(1001)
    const { shipped, warning } = await lookUpWithGitHub(
      lookupOptions(fake(), { version: sha(1001), previousVersion: sha(1) })
    )
    expect(warning).toBeUndefined()
    expect(fake().requestsTo('GET /repos/*/*/compare/*')).toHaveLength(4)
    expect(shipped).toMatchObject({ commitCount: 1000, pullRequestCount: 1000 })
    expect(shipped.pullRequestsComplete).toBe(true)
    expect(shipped.commits).toHaveLength(1000)
    expect(shipped.messages).toHaveLength(1000)
    expect(shippedMetadata(shipped)).toMatchObject({ commit_count: 1000, pull_request_count: 1000 })
    expect(shippedMetadata(shipped)).not.toHaveProperty('pull_requests_complete')
  })

  it(`makes at most ${MAX_API_CALLS} calls, and says so when a longer range is left unread`, async () => {
    const length = MAX_API_CALLS * COMPARE_PAGE_SIZE + 500
    fake().repository.commits = squashMerges(length + 1)
    const { shipped, warning } = await lookUpWithGitHub(
      lookupOptions(fake(), { version: sha(length + 1), previousVersion: sha(1) })
    )
    expect(warning).toBeUndefined()
    expect(fake().requests).toHaveLength(MAX_API_CALLS)
    const read = MAX_API_CALLS * COMPARE_PAGE_SIZE
    expect(shipped).toMatchObject({ commitCount: length, pullRequestCount: read })
    expect(shipped.pullRequestsComplete).toBe(false)
  })

  it('covers every commit read in the lead time', async () => {
    // 300 commits, 10 minutes apart; the change is recorded 10 minutes after the newest.
    const start = Date.parse('2026-03-01T00:00:00Z')
    const at = (n: number) => start + n * 600_000
    fake().repository.commits = history(301).map((commit, i) => ({
      ...commit,
      date: new Date(at(i)).toISOString()
    }))
    const { shipped } = await lookUpWithGitHub(
      lookupOptions(fake(), { version: sha(301), previousVersion: sha(1) })
    )
    expect(leadTime(shipped.commits, at(301))).toEqual({
      median: 90_300,
      max: 180_000,
      commits: 300,
      dropped: 0
    })
  })

  it('falls back to the push payload when the API refuses the token', async () => {
    fake().inject('GET /repos/*/*/actions/runs/*', GitHubFaults.badCredentials)
    const { shipped, warning } = await lookUpWithGitHub(
      lookupOptions(fake(), { eventName: 'push', payload: pushPayload })
    )
    expect(shipped).toMatchObject({
      source: 'push-payload',
      previousSha: sha(9),
      commitCount: 3,
      apiCalls: 1
    })
    expect(warning).toMatch(
      /answered HTTP 401 \("Bad credentials"\).*with the commits of the push payload instead\.$/
    )
  })

  it("works below GitHub Enterprise Server's /api/v3, and links to its server", async () => {
    const ghes = await FakeGitHub.start({
      repository: { fullName: REPOSITORY, ...repository() },
      token: TOKEN,
      prefix: '/api/v3',
      cert: await testCertificate()
    })
    try {
      const { shipped, warning } = await lookUpWithGitHub(
        lookupOptions(ghes, { serverUrl: 'https://ghes.example.com', previousVersion: sha(9) })
      )
      expect(warning).toBeUndefined()
      expect(shipped.compareUrl).toBe(
        `https://ghes.example.com/${REPOSITORY}/compare/${sha(9)}...${sha(12)}`
      )
      expect(ghes.requests.map(request => request.path)).toEqual([
        expect.stringMatching(/^\/api\/v3\/repos\/octo-org\/octo-repo\/compare\//),
        '/api/v3/repos/octo-org/octo-repo/pulls/42'
      ])
    } finally {
      await ghes.close()
    }
  })
})

describe('without a token', () => {
  it('tells what a push brought from its payload alone, with no call', async () => {
    const result = await lookUpWithGitHub(
      lookupOptions(fake(), { token: '', eventName: 'push', payload: pushPayload })
    )
    expect(result.shipped).toMatchObject({
      previousSha: sha(9),
      source: 'push-payload',
      compareUrl: `${SERVER}/compare/${sha(9)}...${sha(12)}`,
      commitCount: 3,
      pullRequests: [{ number: 42, title: 'Fix cart', url: `${SERVER}/pull/42` }],
      changedFiles: [{ path: 'f10.ts' }, { path: 'f11.ts' }, { path: 'f12.ts' }],
      apiCalls: 0
    })
    expect(result.warning).toMatch(
      /^No github-token: what this change ships comes from the push payload only/
    )
    expect(fake().requests).toEqual([])
  })

  it('takes a previous-version SHA for the previous deploy and its compare link', async () => {
    const { shipped, warning } = await lookUpWithGitHub(
      lookupOptions(fake(), { token: '', previousVersion: sha(9) })
    )
    expect(shipped).toMatchObject({
      previousSha: sha(9),
      source: 'input',
      compareUrl: `${SERVER}/compare/${sha(9)}...${sha(12)}`
    })
    expect(shipped.commitCount).toBeUndefined()
    expect(warning).toMatch(/^No github-token: the change is recorded without the commits it ships/)
  })
})

it.each([
  ['a repository that is not owner/repo', { repository: 'octo-org' }],
  ['an empty version', { version: ' ' }]
])('says what it cannot look up with %s', async (_, overrides) => {
  const { shipped, warning } = await lookUpWithGitHub(lookupOptions(fake(), overrides))
  expect(shipped).toMatchObject({ commits: [], apiCalls: 0 })
  expect(warning).toBe(
    'Could not look up what this change ships: the repository ("owner/repo") or the version is unknown.'
  )
})
