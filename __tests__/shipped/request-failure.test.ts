/** A failed Octokit request in the lookup's terms: GitHub's answer, the proxy, the budget, the network. */
import { describe, expect, it } from '@jest/globals'
import { ApiError } from '../../src/shipped/api-failure.ts'
import { failureOfRequest } from '../../src/shipped/request-failure.ts'

const call = 'GET /repos/acme/shop/releases'
const redact = (text: string): string => text.split('s3cret').join('***')

/** An error shaped as Octokit's RequestError for an answered call. */
function answered(status: number, data: unknown, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error('HttpError'), { status, response: { status, data, headers } })
}

describe('failureOfRequest', () => {
  it("gives GitHub's status and message, without the token", () => {
    const error = answered(401, { message: 'Bad credentials for s3cret' })
    expect(failureOfRequest(error, { call, redact })).toEqual({
      type: 'status',
      call,
      status: 401,
      message: 'Bad credentials for ***',
      rateLimited: false
    })
  })

  it('says when the rate limit is used up, and until when', () => {
    const error = answered(
      403,
      { message: 'API rate limit exceeded' },
      {
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1772362800'
      }
    )
    expect(failureOfRequest(error, { call, redact })).toMatchObject({
      rateLimited: true,
      resetAt: '2026-03-01T11:00:00.000Z'
    })
  })

  it('leaves out a reset time no date can hold, instead of throwing', () => {
    const error = answered(429, {}, { 'x-ratelimit-reset': '1e300' })
    const failure = failureOfRequest(error, { call, redact })
    expect(failure).toMatchObject({ rateLimited: true })
    expect(failure).not.toHaveProperty('resetAt')
  })

  it('passes its own failures through, from anywhere in the causes', () => {
    const own = new ApiError({ type: 'too-large', call })
    const wrapped = Object.assign(new Error('fetch failed'), { status: 500, cause: own })
    expect(failureOfRequest(wrapped, { call, redact, budgetMs: 300 })).toEqual({
      type: 'too-large',
      call
    })
  })

  it('names the budget when it ended the call', () => {
    const aborted = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' })
    expect(failureOfRequest(aborted, { call, redact, budgetMs: 300 })).toEqual({
      type: 'budget',
      call,
      budgetMs: 300
    })
  })

  it("names the proxy's refusal of the tunnel with its status", () => {
    const refused = new Error('fetch failed', {
      cause: Object.assign(new Error('Proxy response (407) !== 200 when HTTP Tunneling'), {
        code: 'UND_ERR_ABORTED'
      })
    })
    expect(failureOfRequest(refused, { call, redact, proxy: 'proxy.example:3128' })).toEqual({
      type: 'proxy',
      call,
      proxy: 'proxy.example:3128',
      status: 407
    })
  })

  it("names the system's error code from deep in the causes", () => {
    const reset = new Error('fetch failed', {
      cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })
    })
    expect(failureOfRequest(reset, { call, redact })).toEqual({
      type: 'network',
      call,
      code: 'ECONNRESET'
    })
  })
})
