/**
 * What a deploy ships, read from its forge's API: GitHub's compare through the fake GitHub API,
 * GitLab's through a small loopback fake of its compare endpoint; the reasons no path is read
 * without a call, and the bounds: the token's only destination, the time budget, a cancel, the
 * call limit, the answer cap, and outside text kept as data. A repository named by its URL is
 * looked up only on the configured forge whose server hosts it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { GitHubFaults } from '../../emulator/github.ts'
import { COMPARE_PAGE_SIZE } from '../../src/shipped/compare.ts'
import {
  GITLAB_MAX_DIFF_FILES,
  lookUpRemote,
  lookUpWithForge,
  MAX_FORGE_ANSWER_BYTES,
  MAX_FORGE_CALLS,
  type ConfiguredForge,
  type ForgeLookupOptions
} from '../../src/shipped/forge-lookup.ts'
import { emptyShipped } from '../../src/shipped/types.ts'
import { arrivalOf } from '../support/arrival.ts'
import { closedPort, startLoopback, type Loopback } from '../support/loopback.ts'
import { history, REPOSITORY, sha, TOKEN, useFakeGitHub } from './fake-github.ts'

const GITHUB_WEB = `https://github.com/${REPOSITORY}`
const fake = useFakeGitHub(() => ({
  commits: history(12).map(commit => {
    if (commit.sha === sha(11)) {
      const files = [
        { filename: 'src/new.ts', previous_filename: 'src/old.ts', status: 'renamed' as const }
      ]
      return { ...commit, message: 'Merge pull request #42 from acme/cart\n\nFix the cart', files }
    }
    return commit
  })
}))

const github = (overrides: Partial<ForgeLookupOptions> = {}): ForgeLookupOptions => ({
  forge: 'github',
  serverUrl: 'https://github.com',
  apiUrl: fake().url,
  token: TOKEN,
  repository: REPOSITORY,
  previousVersion: sha(9),
  version: sha(12),
  advice: { tokenInput: 'GITHUB_TOKEN' },
  ...overrides
})

/** A GitLab commit of the loopback fake, with the paths it changes. */
interface GitLabCommit {
  id: string
  message: string
  author_name: string
  diffs: { old_path: string; new_path: string; renamed_file?: boolean }[]
}

const GITLAB_TOKEN = 'glpat-T0kenThatMustNeverShow12345'
const PROJECT = 'group/sub/project'
const GITLAB_WEB = `https://gitlab.example.com/${PROJECT}`
const COMPARE_PATH = `/api/v4/projects/${encodeURIComponent(PROJECT)}/repository/compare`
const gitlabHistory = (): GitLabCommit[] => [
  { id: sha(1), message: 'Start', author_name: 'Dev 1', diffs: [] },
  {
    id: sha(2),
    message: 'Add search (!43)',
    author_name: 'Dev 2',
    diffs: [change('src/search.ts')]
  },
  {
    id: sha(3),
    message:
      "Merge branch 'cart' into 'main'\n\nFix the cart\n\nSee merge request group/sub/project!42",
    author_name: 'Dev 3',
    diffs: [{ old_path: 'src/old.ts', new_path: 'src/new.ts', renamed_file: true }]
  },
  { id: sha(4), message: 'Tidy', author_name: 'Dev 4', diffs: [change('README.md')] }
]
const change = (path: string) => ({ old_path: path, new_path: path })

/**
 * GitLab's compare of two commits of a straight history, as GitLab answers it: the commits after
 * the merge base (none when `to` is the older), oldest first, and their diffs; `body` replaces the
 * answer, and `compareTimeout` says the diffs were cut.
 */
const gitlab = {
  commits: gitlabHistory(),
  compareTimeout: false,
  body: undefined as string | undefined,
  requests: [] as IncomingMessage[]
}
let gitlabServer: Loopback
function answerAsGitLab(request: IncomingMessage, response: ServerResponse): void {
  gitlab.requests.push(request)
  const url = new URL(request.url ?? '', 'https://gitlab.test')
  const reply = (status: number, body: unknown): void => {
    response.writeHead(status, { 'content-type': 'application/json' })
    response.end(typeof body === 'string' ? body : JSON.stringify(body))
  }
  if (request.headers['private-token'] !== GITLAB_TOKEN)
    return reply(401, { message: '401 Unauthorized' })
  if (url.pathname !== COMPARE_PATH) return reply(404, { message: '404 Project Not Found' })
  if (gitlab.body !== undefined) return reply(200, gitlab.body)
  const ids = gitlab.commits.map(commit => commit.id)
  const [from, to] = [
    ids.indexOf(url.searchParams.get('from') ?? ''),
    ids.indexOf(url.searchParams.get('to') ?? '')
  ]
  if (from === -1 || to === -1) return reply(404, { message: '404 Ref Not Found' })
  const between = to > from ? gitlab.commits.slice(from + 1, to + 1) : []
  reply(200, {
    commit: between.at(-1) ?? null,
    commits: between.map(({ id, message, author_name }) => ({
      id,
      short_id: id.slice(0, 8),
      title: message.split('\n')[0],
      message,
      author_name,
      committed_date: '2026-03-01T10:00:00.000+00:00'
    })),
    diffs: between.flatMap(commit => commit.diffs).map(diff => ({ ...diff, diff: '@@ -1 +1 @@' })),
    compare_timeout: gitlab.compareTimeout,
    compare_same_ref: from === to,
    web_url: `${GITLAB_WEB}/-/compare/${ids[from]}...${ids[to]}`
  })
}

const gitlabOptions = (overrides: Partial<ForgeLookupOptions> = {}): ForgeLookupOptions => ({
  forge: 'gitlab',
  serverUrl: 'https://gitlab.example.com',
  apiUrl: `${gitlabServer.url}api/v4`,
  token: GITLAB_TOKEN,
  repository: PROJECT,
  previousVersion: sha(1),
  version: sha(4),
  advice: { tokenInput: 'GITLAB_TOKEN' },
  ...overrides
})

beforeAll(async () => {
  gitlabServer = await startLoopback(answerAsGitLab)
})
beforeEach(() => {
  Object.assign(gitlab, {
    commits: gitlabHistory(),
    compareTimeout: false,
    body: undefined,
    requests: []
  })
})
afterAll(() => gitlabServer.close())

describe('GitHub', () => {
  it('reads the commits, pull requests titled by their messages, and changed paths', async () => {
    const result = await lookUpWithForge(github())
    expect(result).toEqual({
      shipped: {
        forge: { kind: 'github', web: GITHUB_WEB },
        previousSha: sha(9),
        compareUrl: `${GITHUB_WEB}/compare/${sha(9)}...${sha(12)}`,
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
        messages: [
          'Change 10 (#110)\n\nbody',
          'Merge pull request #42 from acme/cart\n\nFix the cart',
          'Commit 12'
        ],
        pullRequests: [
          { number: 110, title: 'Change 10', url: `${GITHUB_WEB}/pull/110` },
          { number: 42, title: 'Fix the cart', url: `${GITHUB_WEB}/pull/42` }
        ],
        pullRequestCount: 2,
        pullRequestsComplete: true,
        rollback: false,
        changedFiles: [
          { path: 'src/f10.ts' },
          { path: 'src/new.ts', previousPath: 'src/old.ts' },
          { path: 'src/f12.ts' }
        ],
        changedFilesComplete: true,
        apiCalls: 1
      }
    })
    const [request] = fake().requests
    expect(request.path).toBe(
      `/repos/${REPOSITORY}/compare/${sha(9)}...${sha(12)}?per_page=${COMPARE_PAGE_SIZE}&page=1`
    )
    expect(request.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28'
    })
  })

  it("reads a rollback's paths from the compare the other way, each rename turned round", async () => {
    const { shipped, warning } = await lookUpWithForge(
      github({ previousVersion: sha(12), version: sha(9) })
    )
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({
      rollback: true,
      commitCount: 0,
      commits: [],
      previousSha: sha(12),
      apiCalls: 2
    })
    expect(shipped.changedFiles).toEqual([
      { path: 'src/f10.ts' },
      { path: 'src/old.ts', previousPath: 'src/new.ts' },
      { path: 'src/f12.ts' }
    ])
    expect(shipped.changedFilesComplete).toBe(true)
    expect(fake().requests.map(request => request.path.split('?')[0])).toEqual([
      `/repos/${REPOSITORY}/compare/${sha(12)}...${sha(9)}`,
      `/repos/${REPOSITORY}/compare/${sha(9)}...${sha(12)}`
    ])
  })

  it(`asks for the newest pages by number, at most ${MAX_FORGE_CALLS} calls, and says what it left unread`, async () => {
    const total = (MAX_FORGE_CALLS + 1) * COMPARE_PAGE_SIZE + 4
    fake().repository.commits = history(total + 1)
    const { shipped, warning } = await lookUpWithForge(
      github({ previousVersion: sha(1), version: sha(total + 1) })
    )
    expect(warning).toBeUndefined()
    const last = MAX_FORGE_CALLS + 2
    const pages = fake().requests.map(request =>
      new URL(request.path, fake().url).searchParams.get('page')
    )
    // Page 1, then the newest pages down to what the calls allow.
    expect(pages).toEqual([
      '1',
      ...Array.from({ length: MAX_FORGE_CALLS - 1 }, (_, i) => String(last - i))
    ])
    expect(shipped).toMatchObject({
      commitCount: total,
      pullRequestsComplete: false,
      apiCalls: MAX_FORGE_CALLS
    })
    expect(shipped.commits[0].sha).toBe(sha(2))
    expect(shipped.commits.at(-1)?.sha).toBe(sha(total + 1))
    expect(shipped.commits).toHaveLength(COMPARE_PAGE_SIZE * (MAX_FORGE_CALLS - 1) + 4)
    // GitHub lists at most 300 files: the list is cut, and says so.
    expect(shipped.changedFilesComplete).toBe(false)
  })

  it('says in one warning that the token was refused, naming it and never showing it', async () => {
    const echo = { status: 401, body: JSON.stringify({ message: `Bad credentials: ${TOKEN}` }) }
    fake().inject('GET /repos/*/*/compare/*', echo)
    const { shipped, warning } = await lookUpWithForge(github())
    expect(warning).toBe(
      `Could not look up everything this change ships: GET /repos/${REPOSITORY}/compare/${sha(9)}...${sha(12)} answered HTTP 401 ("Bad credentials: ***"): the token was not accepted: check GITHUB_TOKEN. The change is recorded without the commits it ships.`
    )
    expect(shipped).toMatchObject({ previousSha: sha(9), commits: [], apiCalls: 1 })
    expect(shipped.commitCount).toBeUndefined()
  })

  it('never follows a redirect, so that the token stays with the API', async () => {
    const elsewhere = await startLoopback((_, response) => response.end('{}'))
    try {
      fake().inject('GET /repos/*/*/compare/*', { redirect: `${elsewhere.url}steal`, status: 307 })
      const { warning } = await lookUpWithForge(github())
      expect(elsewhere.connections).toBe(0)
      expect(warning).toMatch(
        /answered HTTP 307: a redirect is never followed, so that the token stays with the API: check GitHub's API URL\./
      )
    } finally {
      await elsewhere.close()
    }
  })

  it('sends the token over https only, to an API URL without credentials', async () => {
    for (const apiUrl of [
      `http://localhost:${fake().port}`,
      `https://user:pass@localhost:${fake().port}`
    ]) {
      const { shipped, warning } = await lookUpWithForge(github({ apiUrl }))
      expect(warning).toContain("GitHub's API URL is not an https:// URL without credentials")
      expect(shipped).toMatchObject({ previousSha: sha(9), apiCalls: 0 })
    }
    expect(fake().requests).toHaveLength(0)
  })

  it('tells why no path is read, without a call: no token, no previous deploy, no commit', async () => {
    const cases: [Partial<ForgeLookupOptions>, string][] = [
      [{ token: '' }, 'no token'],
      [{ previousVersion: undefined }, 'no previous deploy'],
      [{ version: 'sha256:0123abcd' }, 'version is not a commit'],
      [{ previousVersion: 'main' }, 'version is not a commit']
    ]
    for (const [overrides, reason] of cases) {
      const { shipped, warning } = await lookUpWithForge(github(overrides))
      expect(warning).toBeUndefined()
      expect(shipped).toMatchObject({ pathsUnknown: reason, commits: [], apiCalls: 0 })
      expect(shipped.commitCount).toBeUndefined()
    }
    expect(fake().requests).toHaveLength(0)
  })
})

describe('GitLab', () => {
  it('reads the commits, merge requests titled by their messages, and changed paths', async () => {
    const { shipped, warning } = await lookUpWithForge(gitlabOptions())
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({
      forge: { kind: 'gitlab', web: GITLAB_WEB },
      previousSha: sha(1),
      compareUrl: `${GITLAB_WEB}/-/compare/${sha(1)}...${sha(4)}`,
      commitCount: 3,
      commits: [
        {
          sha: sha(2),
          message: 'Add search (!43)',
          author: 'Dev 2',
          committedAt: '2026-03-01T10:00:00.000+00:00'
        },
        { sha: sha(3), message: "Merge branch 'cart' into 'main'", author: 'Dev 3' },
        { sha: sha(4), message: 'Tidy', author: 'Dev 4' }
      ],
      pullRequests: [
        { number: 43, title: 'Add search', url: `${GITLAB_WEB}/-/merge_requests/43` },
        { number: 42, title: 'Fix the cart', url: `${GITLAB_WEB}/-/merge_requests/42` }
      ],
      pullRequestsComplete: true,
      rollback: false,
      changedFiles: [
        { path: 'src/search.ts' },
        { path: 'src/new.ts', previousPath: 'src/old.ts' },
        { path: 'README.md' }
      ],
      changedFilesComplete: true,
      apiCalls: 1
    })
    const [request] = gitlab.requests
    expect(request.url).toBe(`${COMPARE_PATH}?from=${sha(1)}&to=${sha(4)}`)
    expect(request.headers.authorization).toBeUndefined()
  })

  it("reads a rollback's paths from the compare the other way", async () => {
    const { shipped, warning } = await lookUpWithForge(
      gitlabOptions({ previousVersion: sha(4), version: sha(2) })
    )
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({ rollback: true, commitCount: 0, commits: [], apiCalls: 2 })
    expect(shipped.changedFiles).toEqual([
      { path: 'src/old.ts', previousPath: 'src/new.ts' },
      { path: 'README.md' }
    ])
    expect(gitlab.requests.map(request => request.url)).toEqual([
      `${COMPARE_PATH}?from=${sha(4)}&to=${sha(2)}`,
      `${COMPARE_PATH}?from=${sha(2)}&to=${sha(4)}`
    ])
  })

  it('is no rollback when the version is the one deployed before', async () => {
    const { shipped } = await lookUpWithForge(gitlabOptions({ previousVersion: sha(4) }))
    expect(shipped).toMatchObject({
      rollback: false,
      commitCount: 0,
      changedFiles: [],
      changedFilesComplete: true
    })
  })

  it('says the paths are incomplete when GitLab cut them, or when they reach its bound', async () => {
    gitlab.compareTimeout = true
    expect((await lookUpWithForge(gitlabOptions())).shipped.changedFilesComplete).toBe(false)
    gitlab.compareTimeout = false
    const many = Array.from({ length: GITLAB_MAX_DIFF_FILES }, (_, i) => change(`src/f${i}.ts`))
    gitlab.commits[3].diffs = many
    const { shipped } = await lookUpWithForge(gitlabOptions())
    expect(shipped.changedFiles).toHaveLength(GITLAB_MAX_DIFF_FILES + 2)
    expect(shipped.changedFilesComplete).toBe(false)
  })

  it('says in one warning that the token was refused, naming it', async () => {
    const { shipped, warning } = await lookUpWithForge(gitlabOptions({ token: 'glpat-wrong' }))
    expect(warning).toBe(
      `Could not look up everything this change ships: GET /projects/${encodeURIComponent(PROJECT)}/repository/compare answered HTTP 401 ("401 Unauthorized"): the token was not accepted: check GITLAB_TOKEN. The change is recorded without the commits it ships.`
    )
    expect(shipped).toMatchObject({ previousSha: sha(1), commits: [], apiCalls: 1 })
  })

  it('keeps hostile text as data, and reads only the fields of the expected types', async () => {
    const escape = '\u001b[31mred\u001b[0m ::error::forged <script>x</script>'
    const answer = JSON.stringify({
      commits: [
        {
          id: sha(7),
          message: `${escape}\r\n${'é'.repeat(100_000)}`,
          author_name: escape,
          committed_date: 'soon'
        },
        { id: 7, message: 'no SHA' },
        'a string',
        { id: sha(8), message: { text: 'an object' }, title: 'Titled (!12)', author_name: ['x'] }
      ],
      diffs: [
        { new_path: 42 },
        { new_path: '../../etc/passwd\n', old_path: null },
        'x',
        { old_path: 'only old' }
      ],
      compare_timeout: false
    })
    gitlab.body = `{"__proto__":{"polluted":true},${answer.slice(1)}`
    const { shipped, warning } = await lookUpWithForge(gitlabOptions())
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({
      commitCount: 4,
      commits: [
        { sha: sha(7), message: escape, author: escape },
        { sha: sha(8), message: 'Titled (!12)' }
      ],
      messagesComplete: false,
      pullRequests: [{ number: 12, title: 'Titled' }],
      pullRequestsComplete: false,
      changedFiles: [{ path: '../../etc/passwd\n' }],
      changedFilesComplete: false
    })
    expect(shipped.commits[0]).not.toHaveProperty('committedAt')
    expect(shipped.commits[1]).not.toHaveProperty('author')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('says an answer that is not JSON is not the compare, and reads no answer past its cap', async () => {
    gitlab.body = '<!DOCTYPE html><title>Sign in</title>'
    const page = await lookUpWithForge(gitlabOptions())
    expect(page.warning).toContain(
      "answered HTTP 200: no JSON object: check GitLab's API URL and any proxy in between."
    )
    gitlab.body = `["${'x'.repeat(MAX_FORGE_ANSWER_BYTES)}"]`
    const large = await lookUpWithForge(gitlabOptions())
    expect(large.warning).toContain(
      `answered more than ${MAX_FORGE_ANSWER_BYTES / 1024 / 1024} MiB, which is not read`
    )
  })
})

describe('its bounds', () => {
  it('stops a request that hangs when the time budget runs out, and closes its connection', async () => {
    const silent = await startLoopback(() => undefined)
    try {
      const { shipped, warning } = await lookUpWithForge(
        gitlabOptions({ apiUrl: `${silent.url}api/v4`, budgetMs: 200 })
      )
      expect(warning).toBe(
        `Could not look up everything this change ships: GitLab's API did not answer GET /projects/${encodeURIComponent(PROJECT)}/repository/compare within the lookup's time budget of 0.2 s. The change is recorded without the commits it ships.`
      )
      expect(shipped).toMatchObject({ previousSha: sha(1), apiCalls: 1 })
      expect(silent.requests).toBe(1)
      await silent.allClosed()
    } finally {
      await silent.close()
    }
  })

  it('names the network error when the API cannot be reached', async () => {
    const apiUrl = `https://127.0.0.1:${await closedPort()}/api/v4`
    const { warning } = await lookUpWithForge(gitlabOptions({ apiUrl }))
    expect(warning).toBe(
      `Could not look up everything this change ships: GET /projects/${encodeURIComponent(PROJECT)}/repository/compare failed with ECONNREFUSED: GitLab's API could not be reached. The change is recorded without the commits it ships.`
    )
  })

  it('stops at once when cancelled, keeping the pages read before', async () => {
    const total = 2 * COMPARE_PAGE_SIZE + 1
    fake().repository.commits = history(total + 1)
    fake().inject('GET /repos/*/*/compare/*?page=3', GitHubFaults.hang)
    const cancel = new AbortController()
    const hanging = arrivalOf(fake(), 'GET /repos/*/*/compare/*').then(() =>
      arrivalOf(fake(), 'GET /repos/*/*/compare/*')
    )
    void hanging.then(() => cancel.abort())
    const { shipped, warning } = await lookUpWithForge(
      github({
        previousVersion: sha(1),
        version: sha(total + 1),
        budgetMs: 60_000,
        signal: cancel.signal
      })
    )
    expect(fake().requests).toHaveLength(2)
    expect(shipped).toMatchObject({ commitCount: total, pullRequestsComplete: false, apiCalls: 2 })
    expect(shipped.commits).toHaveLength(COMPARE_PAGE_SIZE)
    expect(warning).toBe(
      `Could not look up everything this change ships: the lookup was stopped before GET /repos/${REPOSITORY}/compare/${sha(1)}...${sha(total + 1)} was answered. The change is recorded with what was found.`
    )
  })
})

describe('a repository named by its URL', () => {
  const forges = (): ConfiguredForge[] => {
    const { forge, serverUrl, apiUrl, token, advice } = github()
    const lab = gitlabOptions()
    return [
      { forge, serverUrl, apiUrl, token, advice },
      { forge: 'gitlab', serverUrl: lab.serverUrl, apiUrl: lab.apiUrl, token: lab.token, advice }
    ]
  }
  const range = { previousVersion: sha(1), version: sha(4) }

  it('is looked up on the forge whose server hosts it, in any of its URL forms', async () => {
    for (const repository of [
      `https://github.com/${REPOSITORY}.git`,
      `ssh://git@github.com/${REPOSITORY}`,
      `git@GitHub.com:${REPOSITORY}.git`
    ]) {
      const found = await lookUpRemote(forges(), { ...range, repository })
      expect(found).toMatchObject({ shipped: { commitCount: 3, forge: { web: GITHUB_WEB } } })
      // Triage links the issues that a GitHub repository's commits close on its server.
      expect(found.links).toEqual({ serverUrl: 'https://github.com', repository: REPOSITORY })
    }
    expect(fake().requests).toHaveLength(3)
    const lab = await lookUpRemote(forges(), { ...range, repository: `${GITLAB_WEB}.git` })
    expect(lab).toEqual({ shipped: expect.objectContaining({ commitCount: 3 }) })
    expect(gitlab.requests).toHaveLength(1)
  })

  it('is not looked up on any other host, even with a path the forge holds: no request, no token sent', async () => {
    for (const repository of [
      `https://git.example.org/${REPOSITORY}.git`,
      `git@github.com.example.org:${REPOSITORY}.git`,
      `https://gitlab.example.com.evil.test/${PROJECT}`,
      `https://github.com/${REPOSITORY}/../../other/repo`,
      'not a repository',
      undefined
    ]) {
      const found = await lookUpRemote(forges(), { ...range, repository })
      expect(found).toEqual({ shipped: { ...emptyShipped(), pathsUnknown: 'no token' } })
    }
    expect(fake().requests).toEqual([])
    expect(gitlab.requests).toEqual([])
  })
})
