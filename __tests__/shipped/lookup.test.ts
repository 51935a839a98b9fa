/**
 * The lookup's rules, the compare and its pagination, pull requests and the failures GitHub
 * answers with, against nock standing in for the REST API. Hangs, resets, the time budget,
 * redirects and proxies need real sockets: github-api.test.ts.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import nock from 'nock'
import { lookUpShipped, type LookupOptions } from '../../src/shipped/lookup.ts'
import { MAX_API_CALLS } from '../../src/shipped/github-client.ts'
import { MAX_COMMITS } from '../../src/shipped/compare.ts'
import { comparePage, history, REPOSITORY, sha, TOKEN, type FakeCommit } from './github-fixtures.ts'

const API = 'https://api.github.com'
const REPO = `/repos/${REPOSITORY}`
const VERSION = sha('version')
const RUN_ID = '5000'

let unmatched: string[]
const recordUnmatched = (req: { method?: string; path?: string }): void => {
  unmatched.push(`${req.method} ${req.path}`)
}

beforeAll(() => {
  nock.disableNetConnect()
  nock.emitter.on('no match', recordUnmatched)
})
beforeEach(() => {
  unmatched = []
  for (const name of ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'])
    delete process.env[name]
})
afterEach(() => nock.cleanAll())
afterAll(() => {
  nock.emitter.removeListener('no match', recordUnmatched)
  nock.enableNetConnect()
  nock.restore()
})

function options(overrides: Partial<LookupOptions> = {}): LookupOptions {
  return {
    token: TOKEN,
    apiUrl: API,
    serverUrl: 'https://github.com',
    repository: REPOSITORY,
    eventName: 'workflow_dispatch',
    payload: {},
    runId: RUN_ID,
    advice: { tokenInput: 'github-token' },
    version: VERSION,
    budgetMs: 5000,
    ...overrides
  }
}

/** GET /compare/{base}...{head} answering with `commits` (every page, with Link headers). */
function mockCompare(
  base: string,
  commits: FakeCommit[],
  extra: { status?: string; resolvedBase?: string; files?: string[]; root?: string } = {}
): nock.Scope {
  const root = extra.root ?? API
  const prefix = new URL(root).pathname.replace(/\/$/, '')
  const path = `${prefix}${REPO}/compare/${encodeURIComponent(base)}...${VERSION}`
  const pageUrl = `${root}${REPO}/compare/${encodeURIComponent(base)}...${VERSION}?per_page=250`
  return nock(new URL(root).origin)
    .get(path)
    .query(true)
    .times(10)
    .reply((uri: string) => {
      // nock 15 hands the reply function the request itself.
      const requested = typeof uri === 'string' ? uri : (uri as unknown as Request).url
      const page = Number(new URL(requested, root).searchParams.get('page') ?? '1')
      const answer = comparePage({
        base: extra.resolvedBase ?? base,
        head: VERSION,
        commits,
        page,
        status: extra.status,
        files: extra.files,
        pageUrl
      })
      return [200, answer.body, answer.headers]
    })
}

/** GET /actions/runs/{id} and the workflow's successful runs. */
function mockRuns(runs: { id: number; sha: string; created_at?: string }[]): void {
  nock(API)
    .get(`${REPO}/actions/runs/${RUN_ID}`)
    .reply(200, {
      id: Number(RUN_ID),
      workflow_id: 77,
      head_branch: 'main',
      head_sha: VERSION,
      run_started_at: '2026-03-01T10:00:05Z',
      created_at: '2026-03-01T10:00:00Z'
    })
  nock(API)
    .get(`${REPO}/actions/workflows/77/runs`)
    .query({ branch: 'main', status: 'success', per_page: '10' })
    .reply(200, {
      total_count: runs.length,
      workflow_runs: runs.map(run => ({
        id: run.id,
        head_sha: run.sha,
        head_branch: 'main',
        created_at: run.created_at ?? '2026-02-01T00:00:00Z'
      }))
    })
}

const PREVIOUS = sha('previous')

describe('the previous deploy', () => {
  it('takes a previous-version SHA as given and compares from it (rule 1)', async () => {
    mockCompare(PREVIOUS, history(3))
    const { shipped, warning } = await lookUpShipped(options({ previousVersion: PREVIOUS }))
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({ previousSha: PREVIOUS, source: 'input', commitCount: 3 })
    expect(shipped.compareUrl).toBe(
      `https://github.com/${REPOSITORY}/compare/${PREVIOUS}...${VERSION}`
    )
    expect(shipped.apiCalls).toBe(1)
    expect(unmatched).toEqual([])
  })

  it('resolves a previous-version tag to its SHA through the compare itself (rule 1)', async () => {
    mockCompare('v1.2.0', history(2), { resolvedBase: PREVIOUS })
    const { shipped } = await lookUpShipped(options({ previousVersion: 'v1.2.0' }))
    expect(shipped).toMatchObject({ previousSha: PREVIOUS, source: 'input', commitCount: 2 })
    expect(shipped.apiCalls).toBe(1)
  })

  it("finds the newest earlier successful deployment to the environment, skipping this run's own (rule 2)", async () => {
    const failed = sha('failed-deploy')
    nock(API)
      .get(`${REPO}/deployments`)
      .query({ environment: 'production', per_page: '10' })
      .reply(200, [
        { id: 9, sha: VERSION, environment: 'production', created_at: '2026-03-01T10:00:00Z' },
        { id: 8, sha: failed, environment: 'production', created_at: '2026-02-02T00:00:00Z' },
        { id: 7, sha: PREVIOUS, environment: 'production', created_at: '2026-02-01T00:00:00Z' }
      ])
    nock(API)
      .get(`${REPO}/deployments/8/statuses`)
      .query({ per_page: '1' })
      .reply(200, [{ state: 'failure' }])
    nock(API)
      .get(`${REPO}/deployments/7/statuses`)
      .query({ per_page: '1' })
      .reply(200, [{ state: 'inactive' }])
    mockCompare(PREVIOUS, history(4))
    const { shipped, warning } = await lookUpShipped(options({ environment: 'production' }))
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({ previousSha: PREVIOUS, source: 'deployment', commitCount: 4 })
    expect(shipped.apiCalls).toBe(4)
    expect(unmatched).toEqual([])
  })

  it('falls through to the workflow runs when no candidate deployment succeeded (rule 2 to 4)', async () => {
    nock(API)
      .get(`${REPO}/deployments`)
      .query(true)
      .reply(200, [
        { id: 8, sha: sha('a'), created_at: '2026-02-02T00:00:00Z' },
        { id: 7, sha: sha('b'), created_at: '2026-02-01T00:00:00Z' },
        { id: 6, sha: sha('c'), created_at: '2026-01-01T00:00:00Z' }
      ])
    nock(API)
      .get(`${REPO}/deployments/8/statuses`)
      .query(true)
      .reply(200, [{ state: 'error' }])
    nock(API).get(`${REPO}/deployments/7/statuses`).query(true).reply(200, [])
    // A re-run of this very version is skipped, and so is this run.
    mockRuns([
      { id: Number(RUN_ID), sha: VERSION },
      { id: 4999, sha: VERSION },
      { id: 4998, sha: PREVIOUS }
    ])
    mockCompare(PREVIOUS, history(2))
    const { shipped, warning } = await lookUpShipped(options({ environment: 'staging' }))
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({
      previousSha: PREVIOUS,
      source: 'workflow-run',
      runStartedAt: '2026-03-01T10:00:05Z',
      commitCount: 2
    })
    expect(shipped.apiCalls).toBe(MAX_API_CALLS)
    expect(unmatched).toEqual([])
  })

  it('takes the previous published release on release events, skipping drafts and this one (rule 3)', async () => {
    nock(API)
      .get(`${REPO}/releases`)
      .query({ per_page: '10' })
      .reply(200, [
        { id: 3, tag_name: 'v2.0.0', draft: false, published_at: '2026-03-01T00:00:00Z' },
        { id: 2, tag_name: 'v1.9.0', draft: true, published_at: null },
        { id: 1, tag_name: 'v1.8.0', draft: false, published_at: '2026-02-01T00:00:00Z' }
      ])
    mockCompare('v1.8.0', history(5), { resolvedBase: PREVIOUS })
    const { shipped } = await lookUpShipped(
      options({
        eventName: 'release',
        payload: { release: { id: 3, tag_name: 'v2.0.0', published_at: '2026-03-01T00:00:00Z' } }
      })
    )
    expect(shipped).toMatchObject({ previousSha: PREVIOUS, source: 'release', commitCount: 5 })
    expect(shipped.apiCalls).toBe(2)
  })

  it('falls through from releases to workflow runs when no earlier release exists (rule 3 to 4)', async () => {
    nock(API)
      .get(`${REPO}/releases`)
      .query(true)
      .reply(200, [
        { id: 3, tag_name: 'v1.0.0', draft: false, published_at: '2026-03-01T00:00:00Z' }
      ])
    mockRuns([{ id: 4998, sha: PREVIOUS }])
    mockCompare(PREVIOUS, history(1))
    const { shipped } = await lookUpShipped(
      options({ eventName: 'release', payload: { release: { id: 3, tag_name: 'v1.0.0' } } })
    )
    expect(shipped).toMatchObject({ source: 'workflow-run', previousSha: PREVIOUS })
  })

  it('finds nothing, without a warning, on the first run of a workflow', async () => {
    mockRuns([{ id: Number(RUN_ID), sha: VERSION }])
    const { shipped, warning } = await lookUpShipped(options())
    expect(warning).toBeUndefined()
    expect(shipped.previousSha).toBeUndefined()
    expect(shipped.commitCount).toBeUndefined()
    expect(shipped.apiCalls).toBe(2)
  })
})

describe('the push payload (rule 5)', () => {
  const before = sha('before')
  const pushPayload = {
    before,
    after: VERSION,
    compare: 'https://evil.example/compare',
    commits: [
      {
        id: sha('p1'),
        message: 'Add login (#41)\n\nmore',
        author: { name: 'Alice', username: 'alice' },
        added: ['a.ts'],
        modified: [],
        removed: []
      },
      {
        id: sha('p2'),
        message: 'Merge pull request #42 from acme/cart\n\nFix cart',
        author: { name: 'Bob' },
        added: [],
        modified: ['b.ts'],
        removed: ['c.ts']
      }
    ]
  }

  it('with no token, uses the payload and makes no API call', async () => {
    const { shipped, warning } = await lookUpShipped(
      options({ token: '', eventName: 'push', payload: pushPayload })
    )
    expect(unmatched).toEqual([])
    expect(shipped).toMatchObject({
      previousSha: before,
      source: 'push-payload',
      commitCount: 2,
      apiCalls: 0,
      compareUrl: `https://github.com/${REPOSITORY}/compare/${before}...${VERSION}`,
      changedFiles: [{ path: 'a.ts' }, { path: 'b.ts' }, { path: 'c.ts' }],
      changedFilesComplete: true
    })
    expect(shipped.commits).toEqual([
      { sha: sha('p1'), message: 'Add login (#41)', author: 'alice' },
      { sha: sha('p2'), message: 'Merge pull request #42 from acme/cart', author: 'Bob' }
    ])
    expect(shipped.pullRequests.map(pull => [pull.number, pull.title])).toEqual([
      [41, 'Add login'],
      [42, 'Fix cart']
    ])
    expect(warning).toMatch(/^No github-token: .*push payload/)
  })

  it('ignores a payload whose before is all zeros (a new branch) or whose after is another commit', async () => {
    for (const payload of [
      { ...pushPayload, before: '0'.repeat(40) },
      { ...pushPayload, after: sha('other') }
    ]) {
      const { shipped } = await lookUpShipped(options({ token: '', eventName: 'push', payload }))
      expect(shipped.previousSha).toBeUndefined()
      expect(shipped.commits).toEqual([])
    }
  })

  it('with no token and no push, makes no call and says why nothing is known', async () => {
    const { shipped, warning } = await lookUpShipped(options({ token: '' }))
    expect(unmatched).toEqual([])
    expect(shipped.apiCalls).toBe(0)
    expect(warning).toMatch(/^No github-token: the change is recorded without the commits/)
  })

  it('is the fallback when the API refuses the token', async () => {
    nock(API).get(`${REPO}/actions/runs/${RUN_ID}`).reply(401, { message: 'Bad credentials' })
    const { shipped, warning } = await lookUpShipped(
      options({ eventName: 'push', payload: pushPayload })
    )
    expect(shipped).toMatchObject({ source: 'push-payload', commitCount: 2, apiCalls: 1 })
    expect(warning).toContain(
      'GET /repos/acme/shop/actions/runs/5000 answered HTTP 401 ("Bad credentials")'
    )
    expect(warning).toContain('push payload')
  })
})

describe('the compare', () => {
  it('counts a 600-commit range exactly, keeps the newest commits, and stays within the call limit', async () => {
    const commits = history(600)
    mockRuns([{ id: 4998, sha: PREVIOUS }])
    mockCompare(PREVIOUS, commits)
    const { shipped, warning } = await lookUpShipped(options())
    expect(warning).toBeUndefined()
    expect(shipped.commitCount).toBe(600)
    expect(shipped.commits).toHaveLength(MAX_COMMITS)
    expect(shipped.commits.map(commit => commit.sha)).toEqual(
      commits.slice(-MAX_COMMITS).map(commit => commit.sha)
    )
    // Pages 1 (count, files) and 3 (the newest 100): 2 + 2 calls, no need for page 2.
    expect(shipped.apiCalls).toBe(4)
    expect(shipped.apiCalls).toBeLessThanOrEqual(MAX_API_CALLS)
  })

  it('follows Link from the last page back while it has too few commits', async () => {
    const commits = history(510)
    mockRuns([{ id: 4998, sha: PREVIOUS }])
    mockCompare(PREVIOUS, commits)
    const { shipped } = await lookUpShipped(options())
    expect(shipped.commitCount).toBe(510)
    // The last page holds 10: page 2 gives the other 40 of the newest 50.
    expect(shipped.commits.map(commit => commit.sha)).toEqual(
      commits.slice(-MAX_COMMITS).map(commit => commit.sha)
    )
    expect(shipped.apiCalls).toBe(5)
    // Every page read counts its pull requests: 50 on page 1, 50 on page 2, 2 on page 3.
    expect(shipped.pullRequestCount).toBe(102)
  })

  it('says a rollback when the version is behind the previous deploy', async () => {
    mockCompare(PREVIOUS, [], { status: 'behind' })
    const { shipped } = await lookUpShipped(options({ previousVersion: PREVIOUS }))
    expect(shipped).toMatchObject({ rollback: true, commitCount: 0, previousSha: PREVIOUS })
  })

  it('gives the changed files, and says when GitHub cut them at 300', async () => {
    mockCompare(PREVIOUS, history(2), { files: ['a.ts', 'b.ts'] })
    const small = await lookUpShipped(options({ previousVersion: PREVIOUS }))
    expect(small.shipped).toMatchObject({
      changedFiles: [{ path: 'a.ts' }, { path: 'b.ts' }],
      changedFilesComplete: true
    })

    nock.cleanAll()
    const many = Array.from({ length: 300 }, (_, i) => `f${i}.ts`)
    mockCompare(PREVIOUS, history(2), { files: many })
    const cut = await lookUpShipped(options({ previousVersion: PREVIOUS }))
    expect(cut.shipped.changedFiles).toHaveLength(300)
    expect(cut.shipped.changedFilesComplete).toBe(false)
  })

  it('makes no compare call when the previous deploy is this version', async () => {
    const { shipped } = await lookUpShipped(options({ previousVersion: VERSION.toUpperCase() }))
    expect(shipped).toMatchObject({ commitCount: 0, apiCalls: 0, changedFiles: [] })
    expect(unmatched).toEqual([])
  })
})

describe('pull requests', () => {
  it('come from squash and merge messages, and GET /pulls gives the titles the messages lack', async () => {
    const commits: FakeCommit[] = [
      { sha: sha('m1'), message: 'Add login (#41)', name: 'A' },
      { sha: sha('m2'), message: 'Merge pull request #42 from acme/cart', name: 'B' },
      { sha: sha('m3'), message: 'plain commit', name: 'C' },
      { sha: sha('m4'), message: 'Add login again (#41)', name: 'D' }
    ]
    mockCompare(PREVIOUS, commits)
    nock(API)
      .get(`${REPO}/pulls/42`)
      .reply(200, { number: 42, title: 'Fix cart', html_url: 'https://evil.example' })
    const { shipped, warning } = await lookUpShipped(options({ previousVersion: PREVIOUS }))
    expect(warning).toBeUndefined()
    expect(shipped.pullRequests).toEqual([
      { number: 41, title: 'Add login', url: 'https://github.com/acme/shop/pull/41' },
      { number: 42, title: 'Fix cart', url: 'https://github.com/acme/shop/pull/42' }
    ])
    expect(shipped.pullRequestCount).toBe(2)
    expect(shipped.apiCalls).toBe(2)
  })
})

describe('failures: one warning, and whatever was found', () => {
  it('403 without deployments permission: names the permissions, and rule 4 still finds the previous deploy', async () => {
    nock(API)
      .get(`${REPO}/deployments`)
      .query(true)
      .reply(403, { message: 'Resource not accessible by integration' })
    mockRuns([{ id: 4998, sha: PREVIOUS }])
    mockCompare(PREVIOUS, history(3))
    const { shipped, warning } = await lookUpShipped(options({ environment: 'production' }))
    expect(shipped).toMatchObject({ source: 'workflow-run', commitCount: 3 })
    expect(warning).toContain('GET /repos/acme/shop/deployments answered HTTP 403')
    expect(warning).toContain('`deployments: read`')
    expect(warning).toContain('`contents: read`, `actions: read`, `deployments: read`')
    expect(warning).toMatch(/recorded with what was found\.$/)
  })

  it('403 rate limit: says so with the reset time and keeps the previous deploy', async () => {
    nock(API).get(`${REPO}/compare/${PREVIOUS}...${VERSION}`).query(true).reply(
      403,
      { message: 'API rate limit exceeded' },
      {
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1772362800'
      }
    )
    const { shipped, warning } = await lookUpShipped(options({ previousVersion: PREVIOUS }))
    expect(shipped).toMatchObject({ previousSha: PREVIOUS, source: 'input' })
    expect(shipped.commitCount).toBeUndefined()
    expect(warning).toContain('rate limit is used up until 2026-03-01T11:00:00.000Z')
    expect(warning).toMatch(/without the commits it ships\.$/)
  })

  it('404 on the compare: says the commit may have been force-pushed away', async () => {
    nock(API)
      .get(`${REPO}/compare/${PREVIOUS}...${VERSION}`)
      .query(true)
      .reply(404, { message: 'Not Found' })
    const { shipped, warning } = await lookUpShipped(options({ previousVersion: PREVIOUS }))
    expect(shipped.previousSha).toBe(PREVIOUS)
    expect(warning).toContain(
      'answered HTTP 404 ("Not Found"): a commit of the range is unknown to GitHub (force-pushed away'
    )
  })

  it('404 on the runs: names `actions: read`', async () => {
    nock(API).get(`${REPO}/actions/runs/${RUN_ID}`).reply(404, { message: 'Not Found' })
    const { warning } = await lookUpShipped(options())
    expect(warning).toContain('the token may lack `actions: read`')
  })

  it('an HTML page instead of JSON: names the call and the content type', async () => {
    nock(API)
      .get(`${REPO}/actions/runs/${RUN_ID}`)
      .reply(200, '<html><body>Sign in</body></html>', { 'Content-Type': 'text/html' })
    const { shipped, warning } = await lookUpShipped(options())
    expect(shipped.apiCalls).toBe(1)
    expect(warning).toContain(
      'GET /repos/acme/shop/actions/runs/5000 answered HTTP 200 with text/html, not JSON'
    )
  })

  it('JSON of the wrong shape: names the call', async () => {
    nock(API)
      .get(`${REPO}/actions/runs/${RUN_ID}`)
      .reply(200, { workflow_id: 77, head_branch: 'main' })
    nock(API).get(`${REPO}/actions/workflows/77/runs`).query(true).reply(200, { runs: 'nope' })
    const { warning } = await lookUpShipped(options())
    expect(warning).toContain(
      'GET /repos/acme/shop/actions/workflows/77/runs answered JSON of an unexpected shape'
    )
  })

  it('counts the other failed calls in the same line', async () => {
    nock(API).get(`${REPO}/deployments`).query(true).reply(403, { message: 'no' })
    nock(API).get(`${REPO}/actions/runs/${RUN_ID}`).reply(404, { message: 'Not Found' })
    const { warning } = await lookUpShipped(options({ environment: 'production' }))
    expect(warning?.split('\n')).toHaveLength(1)
    expect(warning).toContain('(1 other GitHub API call failed too)')
  })

  it('never quotes the token GitHub echoes, not even a part cut from a long message', async () => {
    const message = `${'x'.repeat(100)} token ${TOKEN} was ${encodeURIComponent(TOKEN)} refused`
    nock(API).get(`${REPO}/actions/runs/${RUN_ID}`).reply(401, { message })
    const { warning } = await lookUpShipped(options())
    expect(warning).toContain('answered HTTP 401')
    for (let start = 0; start + 8 <= TOKEN.length; start++) {
      expect(warning).not.toContain(TOKEN.slice(start, start + 8))
    }
  })
})

describe('GitHub Enterprise Server', () => {
  it('calls below /api/v3, names calls below it, and links to the server', async () => {
    const root = 'https://ghes.example.com/api/v3'
    const scope = nock('https://ghes.example.com', {
      reqheaders: {
        authorization: `token ${TOKEN}`,
        'x-github-api-version': '2022-11-28',
        accept: 'application/vnd.github+json'
      }
    })
      .get(`/api/v3${REPO}/actions/runs/${RUN_ID}`)
      .reply(200, { workflow_id: 77, head_branch: 'main' })
      .get(`/api/v3${REPO}/actions/workflows/77/runs`)
      .query(true)
      .reply(200, { workflow_runs: [{ id: 1, head_sha: PREVIOUS }] })
    mockCompare(PREVIOUS, history(2), { root: `${root}/` })
    const { shipped, warning } = await lookUpShipped(
      options({ apiUrl: root, serverUrl: 'https://ghes.example.com' })
    )
    expect(warning).toBeUndefined()
    expect(scope.isDone()).toBe(true)
    expect(shipped.compareUrl).toBe(
      `https://ghes.example.com/acme/shop/compare/${PREVIOUS}...${VERSION}`
    )
    expect(shipped.commitCount).toBe(2)
  })

  it('refuses an API URL that is not https, before any call', async () => {
    const { shipped, warning } = await lookUpShipped(
      options({ apiUrl: 'http://ghes.example.com/api/v3' })
    )
    expect(shipped.apiCalls).toBe(0)
    expect(unmatched).toEqual([])
    expect(warning).toContain('GITHUB_API_URL uses http:, not https:')
  })
})
