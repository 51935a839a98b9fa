/** The one warning of a lookup that fell short: the call, the answer and what to do. */
import { describe, expect, it } from '@jest/globals'
import nock from 'nock'
import { lookUpShipped } from '../../src/shipped/lookup.ts'
import { describeFailure, lookupWarning, noTokenWarning } from '../../src/shipped/warning.ts'
import { history, TOKEN } from './github-fixtures.ts'
import {
  API,
  lookupOptions,
  mockCompare,
  mockRuns,
  PREVIOUS,
  REPO,
  RUN_ID,
  useNock,
  VERSION
} from './github-nock.ts'

useNock()

describe('failures: one warning, and whatever was found', () => {
  it('403 without deployments permission: names the permissions, and the workflow runs still find the previous deploy', async () => {
    nock(API)
      .get(`${REPO}/deployments`)
      .query(true)
      .reply(403, { message: 'Resource not accessible by integration' })
    mockRuns([{ id: 4998, sha: PREVIOUS }])
    mockCompare(PREVIOUS, history(3))
    const { shipped, warning } = await lookUpShipped(lookupOptions({ environment: 'production' }))
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
    const { shipped, warning } = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
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
    const { shipped, warning } = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
    expect(shipped.previousSha).toBe(PREVIOUS)
    expect(warning).toContain(
      'answered HTTP 404 ("Not Found"): a commit of the range is unknown to GitHub (force-pushed away'
    )
  })

  it('404 on the runs: names `actions: read`', async () => {
    nock(API).get(`${REPO}/actions/runs/${RUN_ID}`).reply(404, { message: 'Not Found' })
    const { warning } = await lookUpShipped(lookupOptions())
    expect(warning).toContain('the token may lack `actions: read`')
  })

  it('an HTML page instead of JSON: names the call and the content type', async () => {
    nock(API)
      .get(`${REPO}/actions/runs/${RUN_ID}`)
      .reply(200, '<html><body>Sign in</body></html>', { 'Content-Type': 'text/html' })
    const { shipped, warning } = await lookUpShipped(lookupOptions())
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
    const { warning } = await lookUpShipped(lookupOptions())
    expect(warning).toContain(
      'GET /repos/acme/shop/actions/workflows/77/runs answered JSON of an unexpected shape'
    )
  })

  it('counts the other failed calls in the same line', async () => {
    nock(API).get(`${REPO}/deployments`).query(true).reply(403, { message: 'no' })
    nock(API).get(`${REPO}/actions/runs/${RUN_ID}`).reply(404, { message: 'Not Found' })
    const { warning } = await lookUpShipped(lookupOptions({ environment: 'production' }))
    expect(warning?.split('\n')).toHaveLength(1)
    expect(warning).toContain('(1 other GitHub API call failed too)')
  })

  it('never quotes the token GitHub echoes, not even a part cut from a long message', async () => {
    const message = `${'x'.repeat(100)} token ${TOKEN} was ${encodeURIComponent(TOKEN)} refused`
    nock(API).get(`${REPO}/actions/runs/${RUN_ID}`).reply(401, { message })
    const { warning } = await lookUpShipped(lookupOptions())
    expect(warning).toContain('answered HTTP 401')
    for (let start = 0; start + 8 <= TOKEN.length; start++) {
      expect(warning).not.toContain(TOKEN.slice(start, start + 8))
    }
  })
})

describe("the wording, in the caller's words for the token", () => {
  const GITHUB_TOKEN_INPUT = { tokenInput: 'github-token' }

  it('asks for the token input by the name the caller gives', () => {
    expect(noTokenWarning(false, GITHUB_TOKEN_INPUT)).toBe(
      'No github-token: the change is recorded without the commits it ships. Give the github-token input (the default, ${{ github.token }}) to look them up.'
    )
    expect(noTokenWarning(true, GITHUB_TOKEN_INPUT)).toBe(
      'No github-token: what this change ships comes from the push payload only. Give the github-token input (the default, ${{ github.token }}) to look up the previous deploy.'
    )
    expect(noTokenWarning(false, { tokenInput: 'repo-token' })).toMatch(
      /^No repo-token: .* Give the repo-token input /
    )
  })

  it('sends a refused token back to the input the caller names', () => {
    const failure = {
      type: 'status' as const,
      call: 'GET /repos/o/r/releases',
      status: 401,
      message: 'Bad credentials',
      rateLimited: false
    }
    expect(
      lookupWarning([failure], { commitsKnown: false, fromPushPayload: false }, GITHUB_TOKEN_INPUT)
    ).toBe(
      'Could not look up everything this change ships: GET /repos/o/r/releases answered HTTP 401 ("Bad credentials"): the token was not accepted; check the github-token input. The change is recorded without the commits it ships.'
    )
    expect(describeFailure(failure, { tokenInput: 'repo-token' })).toContain(
      'check the repo-token input'
    )
  })

  it('names a request the lookup would not send as refused, not as unreachable', () => {
    const text = describeFailure(
      {
        type: 'refused',
        call: 'GET /repos/o/r/compare/a...b',
        reason: 'its URL is longer than 8192 characters'
      },
      GITHUB_TOKEN_INPUT
    )
    expect(text).toBe(
      'GET /repos/o/r/compare/a...b was refused before it was sent: its URL is longer than 8192 characters'
    )
  })

  it('says nothing when only the call limit stopped a call', () => {
    const limited = { type: 'call-limit' as const, call: 'GET /repos/o/r/pulls/1' }
    expect(
      lookupWarning([limited], { commitsKnown: true, fromPushPayload: false }, GITHUB_TOKEN_INPUT)
    ).toBeUndefined()
  })
})
