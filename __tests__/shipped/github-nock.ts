/**
 * nock standing in for GitHub's REST API, for the lookup's tests of single canned answers:
 * the hooks that fence the network, the lookup's options, and the answers most tests need.
 * Hangs, budgets, proxies and sizes need real sockets: github-client.test.ts.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from '@jest/globals'
import nock from 'nock'
import type { LookupOptions } from '../../src/shipped/lookup.ts'
import {
  comparePage,
  REPOSITORY,
  sha,
  TOKEN,
  type CompareOptions,
  type FakeCommit
} from './github-fixtures.ts'

export const API = 'https://api.github.com'
export const REPO = `/repos/${REPOSITORY}`
export const VERSION = sha('version')
export const PREVIOUS = sha('previous')
export const RUN_ID = '5000'

/** Fences the network for the file's tests; the requests nock had no answer for are listed. */
export function useNock(): { unmatched: () => string[] } {
  let unmatched: string[] = []
  const record = (req: { method?: string; path?: string }): void => {
    unmatched.push(`${req.method} ${req.path}`)
  }
  beforeAll(() => {
    nock.disableNetConnect()
    nock.emitter.on('no match', record)
  })
  beforeEach(() => {
    unmatched = []
    for (const name of ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'])
      delete process.env[name]
  })
  afterEach(() => nock.cleanAll())
  afterAll(() => {
    nock.emitter.removeListener('no match', record)
    nock.enableNetConnect()
    nock.restore()
  })
  return { unmatched: () => unmatched }
}

export function lookupOptions(overrides: Partial<LookupOptions> = {}): LookupOptions {
  return {
    token: TOKEN,
    apiUrl: API,
    serverUrl: 'https://github.com',
    repository: REPOSITORY,
    eventName: 'workflow_dispatch',
    payload: {},
    runId: RUN_ID,
    version: VERSION,
    budgetMs: 5000,
    advice: { tokenInput: 'github-token' },
    ...overrides
  }
}

export interface CompareMock {
  status?: string
  resolvedBase?: string
  files?: CompareOptions['files']
  root?: string
  /** Changes the first page's JSON before it is sent. */
  firstPage?: (body: Record<string, unknown>) => void
  /** Replaces the Link header of every page. */
  link?: string
  /** Pages answered with this status instead (a 502 from a gateway). */
  failingPages?: Record<number, number>
}

/** GET /compare/{base}...{head} answering with `commits` (every page, with Link headers). */
export function mockCompare(
  base: string,
  commits: FakeCommit[],
  extra: CompareMock = {}
): nock.Scope {
  const root = extra.root ?? API
  const prefix = new URL(root).pathname.replace(/\/$/, '')
  const path = `${prefix}${REPO}/compare/${encodeURIComponent(base)}...${VERSION}`
  const pageUrl = `${root.replace(/\/$/, '')}${REPO}/compare/${encodeURIComponent(base)}...${VERSION}?per_page=250`
  return nock(new URL(root).origin)
    .get(path)
    .query(true)
    .times(10)
    .reply((uri: string) => {
      // nock 15 hands the reply function the request itself.
      const requested = typeof uri === 'string' ? uri : (uri as unknown as Request).url
      const page = Number(new URL(requested, root).searchParams.get('page') ?? '1')
      const failing = extra.failingPages?.[page]
      if (failing) return [failing, { message: 'Server Error' }]
      const answer = comparePage({
        base: extra.resolvedBase ?? base,
        head: VERSION,
        commits,
        page,
        status: extra.status,
        files: extra.files,
        pageUrl
      })
      if (page === 1) extra.firstPage?.(answer.body)
      if (extra.link !== undefined) answer.headers.Link = extra.link
      return [200, answer.body, answer.headers]
    })
}

/** GET /actions/runs/{id} and the workflow's successful runs. */
export function mockRuns(runs: { id: number; sha: string; created_at?: string }[]): void {
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
