/**
 * The fake GitHub REST API's contract: the endpoints the lookup of what a change ships reads, their
 * order and pagination, the path prefix of GitHub Enterprise Server, the token, the request log
 * and the faults.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import type { IncomingHttpHeaders } from 'node:http'
import * as https from 'node:https'
import { FakeGitHub, GitHubFaults, type GitHubRepository } from '../emulator/github.ts'
import { testCertificate, type TestCertificate } from '../emulator/tls.ts'

const TOKEN = 'ghs_faketoken123'
/** A distinct SHA per number, whose 7-character prefix is unique in the history below. */
const sha = (n: number): string => `${n.toString(16)}a`.padEnd(40, 'c')

/** A history of 600 commits on main, each touching its own file, plus one side branch. */
const REPOSITORY: GitHubRepository = {
  fullName: 'octo-org/octo-repo',
  commits: [
    ...Array.from({ length: 600 }, (_, i) => ({
      sha: sha(i + 1),
      message: `Change ${i + 1} (#${i + 1})\n\nDetails`,
      author: i % 2 ? { name: 'Mona', login: 'mona' } : { name: 'Someone Offline' },
      files: [{ filename: `src/file-${i + 1}.ts`, status: 'added' as const }]
    })),
    { sha: sha(9999), message: 'Hotfix', author: { name: 'Hu', login: 'hu' }, parent: sha(3) }
  ],
  refs: { main: sha(600), 'v1.0.0': sha(2) },
  deployments: [
    { id: 11, sha: sha(1), environment: 'production', statuses: ['in_progress', 'success'] },
    { id: 12, sha: sha(2), environment: 'staging', statuses: ['success'] },
    { id: 13, sha: sha(3), environment: 'production', statuses: ['success', 'inactive'] }
  ],
  releases: [
    { tag_name: 'v1.0.0', target_commitish: sha(2) },
    { tag_name: 'v1.1.0-rc.1', prerelease: true },
    { tag_name: 'v2.0.0', draft: true }
  ],
  runs: [
    { id: 101, workflow_id: 7, head_branch: 'main', head_sha: sha(1) },
    { id: 102, workflow_id: 7, head_branch: 'main', head_sha: sha(2), conclusion: 'failure' },
    { id: 103, workflow_id: 7, head_branch: 'dev', head_sha: sha(3) },
    { id: 104, workflow_id: 7, head_branch: 'main', head_sha: sha(4) },
    {
      id: 105,
      workflow_id: 8,
      head_branch: 'main',
      head_sha: sha(5),
      path: '.github/workflows/ci.yml'
    },
    { id: 106, workflow_id: 7, head_branch: 'main', head_sha: sha(6), status: 'in_progress' }
  ],
  pulls: [{ number: 42, title: 'Fix the cart', author: 'mona' }]
}

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

let certificate: TestCertificate
let github: FakeGitHub

function get(
  path: string,
  headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` },
  server: FakeGitHub = github,
  timeoutMs = 2000
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${server.url}${path}`,
      { ca: certificate.cert, headers, agent: false },
      res => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8')
          })
        )
      }
    )
    req.on('error', reject)
    req.setTimeout(timeoutMs, () => req.destroy(new Error('client timeout')))
    req.end()
  })
}

async function getJson<T>(path: string): Promise<T> {
  const answer = await get(path)
  expect(answer.status).toBe(200)
  expect(answer.headers['content-type']).toMatch(/^application\/json/)
  return JSON.parse(answer.body) as T
}

const REPO = '/repos/octo-org/octo-repo'

beforeAll(async () => {
  for (const name of ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'])
    delete process.env[name]
  certificate = await testCertificate()
  github = await FakeGitHub.start({ repository: REPOSITORY, token: TOKEN, cert: certificate })
})

afterAll(async () => {
  await github.close()
})

beforeEach(() => github.reset())

describe('deployments and releases', () => {
  it('lists deployments to one environment newest first, and their statuses newest first', async () => {
    const deployments = await getJson<Record<string, unknown>[]>(
      `${REPO}/deployments?environment=production`
    )
    expect(deployments.map(d => [d.id, d.sha, d.environment])).toEqual([
      [13, sha(3), 'production'],
      [11, sha(1), 'production']
    ])
    expect(deployments[0]).toMatchObject({ ref: sha(3), created_at: expect.any(String) })
    expect(Date.parse(String(deployments[0].created_at))).toBeGreaterThan(
      Date.parse(String(deployments[1].created_at))
    )
    const statuses = await getJson<{ state: string }[]>(`${REPO}/deployments/13/statuses`)
    expect(statuses.map(s => s.state)).toEqual(['inactive', 'success'])
    expect((await get(`${REPO}/deployments/99/statuses`)).status).toBe(404)
  })

  it('lists releases newest first, drafts unpublished', async () => {
    const releases = await getJson<Record<string, unknown>[]>(`${REPO}/releases?per_page=10`)
    expect(releases.map(r => [r.tag_name, r.draft, r.prerelease])).toEqual([
      ['v2.0.0', true, false],
      ['v1.1.0-rc.1', false, true],
      ['v1.0.0', false, false]
    ])
    expect(releases[0].published_at).toBeNull()
    expect(releases[2]).toMatchObject({
      target_commitish: sha(2),
      published_at: expect.any(String)
    })
  })
})

describe('workflow runs', () => {
  it('reads one run, and 404 for an unknown one', async () => {
    const run = await getJson<Record<string, unknown>>(`${REPO}/actions/runs/104`)
    expect(run).toMatchObject({
      id: 104,
      workflow_id: 7,
      head_branch: 'main',
      head_sha: sha(4),
      run_started_at: expect.any(String),
      created_at: expect.any(String)
    })
    expect((await get(`${REPO}/actions/runs/1`)).status).toBe(404)
  })

  it('lists successful runs of a workflow on a branch newest first, paginated with Link', async () => {
    const path = `${REPO}/actions/workflows/7/runs?branch=main&status=success`
    const all = await getJson<{ total_count: number; workflow_runs: { id: number }[] }>(path)
    expect(all.total_count).toBe(2)
    expect(all.workflow_runs.map(r => r.id)).toEqual([104, 101])

    const first = await get(`${path}&per_page=1`)
    expect(JSON.parse(first.body).workflow_runs.map((r: { id: number }) => r.id)).toEqual([104])
    expect(first.headers.link).toContain('page=2>; rel="next"')
    const byFile = await getJson<{ workflow_runs: { id: number }[] }>(
      `${REPO}/actions/workflows/ci.yml/runs?status=success`
    )
    expect(byFile.workflow_runs.map(r => r.id)).toEqual([105])
  })
})

describe('compare', () => {
  interface Comparison {
    status: string
    ahead_by: number
    behind_by: number
    total_commits: number
    html_url: string
    merge_base_commit: { sha: string }
    commits: {
      sha: string
      commit: { message: string; author: { name: string } }
      author: { login: string } | null
    }[]
    files: { filename: string; status: string }[]
  }

  it('lists the commits ahead oldest first, with messages, authors, files and a link', async () => {
    const comparison = await getJson<Comparison>(`${REPO}/compare/${sha(2)}...${sha(4)}`)
    expect(comparison).toMatchObject({
      status: 'ahead',
      ahead_by: 2,
      behind_by: 0,
      total_commits: 2,
      html_url: `https://github.com/octo-org/octo-repo/compare/${sha(2)}...${sha(4)}`
    })
    expect(
      comparison.commits.map(c => [
        c.sha,
        c.commit.message.split('\n')[0],
        c.commit.author.name,
        c.author?.login ?? null
      ])
    ).toEqual([
      [sha(3), 'Change 3 (#3)', 'Someone Offline', null],
      [sha(4), 'Change 4 (#4)', 'Mona', 'mona']
    ])
    expect(comparison.files).toEqual([
      expect.objectContaining({ filename: 'src/file-3.ts', status: 'added' }),
      expect.objectContaining({ filename: 'src/file-4.ts', status: 'added' })
    ])
  })

  it('says behind for a rollback, identical for the same commit, diverged across branches', async () => {
    const behind = await getJson<Comparison>(`${REPO}/compare/${sha(5)}...${sha(2)}`)
    expect(behind).toMatchObject({ status: 'behind', ahead_by: 0, behind_by: 3, commits: [] })
    expect((await getJson<Comparison>(`${REPO}/compare/main...${sha(600)}`)).status).toBe(
      'identical'
    )
    const diverged = await getJson<Comparison>(`${REPO}/compare/${sha(5)}...${sha(9999)}`)
    expect(diverged).toMatchObject({ status: 'diverged', ahead_by: 1, behind_by: 2 })
    expect(diverged.merge_base_commit.sha).toBe(sha(3))
  })

  it('resolves tags, branches and short SHAs, and answers 404 to an unknown one', async () => {
    const byTag = await getJson<Comparison>(`${REPO}/compare/v1.0.0...${sha(4).slice(0, 7)}`)
    expect(byTag).toMatchObject({ status: 'ahead', ahead_by: 2 })
    expect((await getJson<Comparison>(`${REPO}/compare/v1.0.0...main`)).ahead_by).toBe(598)
    const unknown = await get(`${REPO}/compare/${'f'.repeat(40)}...main`)
    expect(unknown.status).toBe(404)
    expect(JSON.parse(unknown.body).message).toMatch(/No commit found/)
  })

  it('lists a renamed file with its old path, also once it is changed again', async () => {
    const author = { name: 'A' }
    github.repository = {
      fullName: 'octo-org/octo-repo',
      commits: [
        { sha: sha(1), message: 'Start', author },
        {
          sha: sha(2),
          message: 'Move',
          author,
          files: [{ filename: 'b.ts', status: 'renamed', previous_filename: 'a.ts' }]
        },
        { sha: sha(3), message: 'Edit', author, files: [{ filename: 'b.ts' }] }
      ]
    }
    try {
      const comparison = await getJson<Comparison>(`${REPO}/compare/${sha(1)}...${sha(3)}`)
      expect(comparison.files).toEqual([
        expect.objectContaining({ filename: 'b.ts', status: 'renamed', previous_filename: 'a.ts' })
      ])
    } finally {
      github.repository = REPOSITORY
    }
  })

  it('pages 600 commits by at most 250 from the oldest, with next and last links', async () => {
    const range = `${REPO}/compare/${sha(1)}...main`
    const first = await get(`${range}?per_page=1000`)
    const page1 = JSON.parse(first.body) as Comparison
    expect(page1.total_commits).toBe(599)
    expect(page1.commits).toHaveLength(250)
    expect(page1.commits[0].sha).toBe(sha(2))
    expect(page1.files).toHaveLength(300)
    expect(first.headers.link).toBe(
      `<${github.url}${range}?per_page=250&page=2>; rel="next", <${github.url}${range}?per_page=250&page=3>; rel="last"`
    )
    const page3 = await getJson<Comparison>(`${range}?per_page=250&page=3`)
    expect(page3.commits.map(c => c.sha)).toEqual(
      Array.from({ length: 99 }, (_, i) => sha(502 + i))
    )
    const unpaged = await get(range)
    expect(unpaged.headers.link).toBeUndefined()
    const recent = JSON.parse(unpaged.body) as Comparison
    expect(recent.commits).toHaveLength(250)
    expect(recent.commits.at(-1)?.sha).toBe(sha(600))
  })
})

describe('pull requests', () => {
  it('reads a pull request by number, and 404 for an unknown one', async () => {
    expect(await getJson(`${REPO}/pulls/42`)).toMatchObject({
      number: 42,
      title: 'Fix the cart',
      html_url: 'https://github.com/octo-org/octo-repo/pull/42'
    })
    expect((await get(`${REPO}/pulls/43`)).status).toBe(404)
  })
})

describe('token, prefix and request log', () => {
  it('records each request with its headers; 404 without a token and 401 with a wrong one', async () => {
    expect((await get(`${REPO}/pulls/42`, {})).status).toBe(404)
    const wrong = await get(`${REPO}/pulls/42`, { authorization: 'Bearer nope' })
    expect(wrong.status).toBe(401)
    expect(JSON.parse(wrong.body).message).toBe('Bad credentials')
    expect((await get(`${REPO}/pulls/42`, { authorization: `token ${TOKEN}` })).status).toBe(200)
    expect(github.requests.map(r => [r.method, r.path, r.headers.authorization])).toEqual([
      ['GET', `${REPO}/pulls/42`, undefined],
      ['GET', `${REPO}/pulls/42`, 'Bearer nope'],
      ['GET', `${REPO}/pulls/42`, `token ${TOKEN}`]
    ])
    expect(github.requestsTo('GET /repos/*/*/pulls/*')).toHaveLength(3)
    expect(github.requestsTo('GET /repos/*/*/compare/*')).toHaveLength(0)
  })

  it('serves below a path prefix (GitHub Enterprise Server), and nothing outside it', async () => {
    const enterprise = await FakeGitHub.start({
      repository: REPOSITORY,
      prefix: '/api/v3',
      cert: certificate
    })
    try {
      expect(enterprise.url).toBe(`https://localhost:${enterprise.port}/api/v3`)
      expect((await get(`${REPO}/pulls/42`, {}, enterprise)).status).toBe(200)
      expect(enterprise.requests[0].path).toBe(`/api/v3${REPO}/pulls/42`)
      expect(enterprise.requestsTo('GET /repos/*/*/pulls/*')).toHaveLength(1)
      const outside = await new Promise<number>((resolve, reject) =>
        https
          .get(
            `https://localhost:${enterprise.port}${REPO}/pulls/42`,
            { ca: certificate.cert, agent: false },
            res => resolve(res.statusCode ?? 0)
          )
          .on('error', reject)
      )
      expect(outside).toBe(404)
      expect((await get('/repos/other/repo/pulls/42', {}, enterprise)).status).toBe(404)
    } finally {
      await enterprise.close()
    }
  })
})

describe('faults', () => {
  it('answers 403 rate limited with x-ratelimit-remaining 0, once', async () => {
    github.inject('GET /repos/*/*/deployments', GitHubFaults.rateLimited)
    const limited = await get(`${REPO}/deployments`)
    expect(limited.status).toBe(403)
    expect(limited.headers['x-ratelimit-remaining']).toBe('0')
    expect(JSON.parse(limited.body).message).toMatch(/rate limit/)
    const next = await get(`${REPO}/deployments`)
    expect(next.status).toBe(200)
    expect(Number(next.headers['x-ratelimit-remaining'])).toBeGreaterThan(0)
  })

  it.each([
    ['401', GitHubFaults.badCredentials, 401],
    ['404', GitHubFaults.notFound, 404]
  ])('answers a %s fault on one route only', async (_, fault, status) => {
    github.inject('GET /repos/*/*/compare/*', fault, Infinity)
    expect((await get(`${REPO}/compare/${sha(1)}...${sha(2)}`)).status).toBe(status)
    expect((await get(`${REPO}/pulls/42`)).status).toBe(200)
  })

  it('answers a fault for a route with a query only to requests with those parameters', async () => {
    github.inject('GET /repos/*/*/compare/*?page=3', GitHubFaults.badGateway, Infinity)
    const range = `${REPO}/compare/${sha(1)}...${sha(600)}?per_page=250`
    expect((await get(range)).status).toBe(200)
    expect((await get(`${range}&page=2`)).status).toBe(200)
    const failed = await get(`${range}&page=3`)
    expect(failed.status).toBe(502)
    expect(JSON.parse(failed.body).message).toBe('Server Error')
    github.reset()
    expect((await get(`${range}&page=3`)).status).toBe(200)
  })

  it('answers an HTML page where JSON is expected', async () => {
    github.inject('GET /repos/*/*/releases', GitHubFaults.html)
    const answer = await get(`${REPO}/releases`)
    expect(answer.status).toBe(200)
    expect(answer.headers['content-type']).toMatch(/^text\/html/)
    expect(answer.body).toMatch(/^<!DOCTYPE html>/)
  })

  it('resets the connection, or hangs until the client gives up', async () => {
    github.inject('GET /repos/*/*/actions/runs/*', GitHubFaults.reset)
    await expect(get(`${REPO}/actions/runs/101`)).rejects.toThrow(/socket hang up|ECONNRESET/)
    github.inject('GET /repos/*/*/actions/runs/*', GitHubFaults.hang)
    await expect(get(`${REPO}/actions/runs/101`, undefined, github, 100)).rejects.toThrow(
      'client timeout'
    )
    expect(github.requestsTo('GET /repos/*/*/actions/runs/*')).toHaveLength(2)
  })
})
