/** A failed call in words (the call, the answer and what to do), and the one warning line. */
import { describe, expect, it } from '@jest/globals'
import {
  callFailure,
  LookupError,
  lookupWarning,
  noTokenWarning
} from '../../src/shipped/warning.ts'

const wording = { advice: { tokenInput: 'github-token' } }

/** An error shaped as Octokit's RequestError for an answered call. */
function answered(status: number, message: string, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(message), { status, response: { data: { message }, headers } })
}

describe("GitHub's answer", () => {
  it.each([
    ['/repos/o/r/deployments', 'deployments: read', ''],
    ['/repos/o/r/actions/runs/5', 'actions: read', ''],
    ['/repos/o/r/releases', 'contents: read', ''],
    ['/repos/o/r/pulls/42', 'pull-requests: read', ' and `pull-requests: read`']
  ])('names the permission GET %s needs when refused, and goes on', (path, permission, more) => {
    const refused = answered(403, 'Resource not accessible by integration')
    const failure = callFailure(refused, `GET ${path}`, wording)
    expect(failure.message).toBe(
      `GET ${path} answered HTTP 403 ("Resource not accessible by integration"): the token may lack \`${permission}\`; grant the workflow \`permissions:\` \`contents: read\`, \`actions: read\`, \`deployments: read\`${more}`
    )
    expect(failure.final).toBe(false)
  })

  it('says a 404 on the compare may be a commit force-pushed away', () => {
    const failure = callFailure(answered(404, 'Not Found'), 'GET /repos/o/r/compare/a...b', wording)
    expect(failure.message).toBe(
      'GET /repos/o/r/compare/a...b answered HTTP 404 ("Not Found"): a commit of the range is unknown to GitHub (force-pushed away, or a previous-version that names no commit, tag or branch)'
    )
  })

  it('sends a refused token back to the input the caller names, and ends the search', () => {
    const failure = callFailure(answered(401, 'Bad credentials'), 'GET /repos/o/r/releases', {
      ...wording,
      advice: { tokenInput: 'repo-token' }
    })
    expect(failure.message).toBe(
      'GET /repos/o/r/releases answered HTTP 401 ("Bad credentials"): the token was not accepted; check the repo-token input'
    )
    expect(failure.final).toBe(true)
  })

  it.each([
    [
      403,
      { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1772362800' },
      ' until 2026-03-01T11:00:00.000Z'
    ],
    [403, { 'retry-after': '60' }, ''],
    [429, { 'x-ratelimit-reset': '1e300' }, '']
  ])('says the rate limit is used up (%s, %j), and ends the search', (status, headers, until) => {
    const failure = callFailure(
      answered(status, 'API rate limit exceeded', headers),
      'GET /x',
      wording
    )
    expect(failure.message).toBe(
      `GET /x answered HTTP ${status} ("API rate limit exceeded"): the token's GitHub API rate limit is used up${until}; the next run will try again`
    )
    expect(failure.final).toBe(true)
  })

  it('says a server error will be tried again next run, and goes on to the next rule', () => {
    const failure = callFailure(answered(502, 'Server Error'), 'GET /x', wording)
    expect(failure.message).toBe(
      'GET /x answered HTTP 502 ("Server Error"): GitHub could not answer; the next run will try again'
    )
    expect(failure.final).toBe(false)
  })
})

describe('the network and the proxy', () => {
  it("names the system's error code from deep in the causes, and the proxy in between", () => {
    const reset = new Error('fetch failed', {
      cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })
    })
    expect(callFailure(reset, 'GET /x', { ...wording, proxy: 'proxy.example:3128' }).message).toBe(
      'GET /x failed with ECONNRESET through the proxy proxy.example:3128: the GitHub API could not be reached'
    )
  })

  it.each([
    ['407', "check the proxy's credentials in HTTPS_PROXY"],
    ['403', "the proxy refuses the API's host: allow it, or add it to NO_PROXY"],
    ['502', 'the proxy could not reach the GitHub API']
  ])("names the proxy's refusal of the tunnel (%s) by its host and port", (status, advice) => {
    // As Octokit wraps undici's error.
    const refused = new Error('Request was cancelled.', {
      cause: new TypeError('fetch failed', {
        cause: new Error(`Proxy response (${status}) !== 200 when HTTP Tunneling`)
      })
    })
    expect(
      callFailure(refused, 'GET /x', { ...wording, proxy: 'proxy.example:3128' }).message
    ).toBe(
      `the proxy proxy.example:3128 answered HTTP ${status} to the tunnel for GET /x: ${advice}`
    )
  })
})

describe('the warning line', () => {
  const failures = [new LookupError('GET /a answered HTTP 403.'), new LookupError('GET /b failed')]

  it('names the first failure, counts the others, and says what the change is recorded with', () => {
    expect(lookupWarning(failures, true)).toBe(
      'Could not look up everything this change ships: GET /a answered HTTP 403 (1 other GitHub API call failed too). The change is recorded with what was found.'
    )
    expect(lookupWarning(failures.slice(1), false)).toBe(
      'Could not look up everything this change ships: GET /b failed. The change is recorded without the commits it ships.'
    )
    expect(lookupWarning(failures.slice(1), true, true)).toMatch(
      /recorded with the commits of the push payload instead\.$/
    )
    expect(lookupWarning([], false)).toBeUndefined()
  })

  it('asks for the token input by the name the caller gives', () => {
    expect(noTokenWarning(false, { tokenInput: 'github-token' })).toBe(
      'No github-token: the change is recorded without the commits it ships. Give the github-token input (the default, ${{ github.token }}) to look them up.'
    )
    expect(noTokenWarning(true, { tokenInput: 'repo-token' })).toBe(
      'No repo-token: what this change ships comes from the push payload only. Give the repo-token input (the default, ${{ github.token }}) to look up the previous deploy.'
    )
  })
})
