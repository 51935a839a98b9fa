/**
 * The service's failures: what is retried, what the service said, and the words of a failure with
 * advice in the caller's words.
 */
import { describe, expect, it } from '@jest/globals'
import { ServiceError } from '../../src/errors.ts'
import { Redactor } from '../../src/redact.ts'
import {
  bodyExcerpt,
  failureError,
  isRetryable,
  networkFailure,
  nodeMessage,
  serviceMessage,
  type Failure
} from '../../src/service/failures.ts'
import type { ServiceRequest } from '../../src/service/request.ts'

const API_KEY = 'k3y-S3cr3t/value'
const ACTION_ADVICE = {
  changeWait: 'raise the timeout-seconds input',
  checkAddress: 'check the base-url input',
  checkApiKey: "check the api-key input and the key's permissions"
}
const createChange: ServiceRequest = { method: 'POST', path: 'v2/change', body: '{}' }

describe('service messages and excerpts', () => {
  const redactor = new Redactor()
  redactor.add(API_KEY)

  it.each([
    ['{"message":"bad description"}', 'bad description'],
    [
      '{"error":"invalid_request","error_description":"created_at is in the future"}',
      'created_at is in the future'
    ],
    ['{"error":{"message":"nested reason"}}', 'nested reason'],
    ['{"detail":"  spread\\n over\\n lines "}', 'spread over lines'],
    ['{"errors":[{"field":"labels"}]}', '[{"field":"labels"}]'],
    ['"just a string"', 'just a string'],
    ['{"unrelated":true}', '{"unrelated":true}'],
    ['Service Unavailable', 'Service Unavailable'],
    ['', '(empty body)']
  ])('reads %j as %j', (body, expected) => {
    expect(serviceMessage(body, redactor)).toBe(expected)
  })

  it('redacts before shortening, so no part of a key survives a cut', () => {
    const body = `${'x'.repeat(190)} ${API_KEY}`
    const excerpt = serviceMessage(body, redactor)
    expect(excerpt).toBe(`${'x'.repeat(190)} ***`)
  })

  it('bodyExcerpt makes one line of at most 200 characters, without HTML tags', () => {
    expect(bodyExcerpt('  \n\t ', redactor)).toBe('(empty body)')
    expect(bodyExcerpt('line one\n\n  line two', redactor)).toBe('line one line two')
    expect(
      bodyExcerpt(
        '<!DOCTYPE html><html><head><style>p{}</style><title>502</title></head><body><p>Bad&nbsp;gateway &amp; more</p></body></html>',
        redactor
      )
    ).toBe('502 Bad gateway & more')
    expect(bodyExcerpt('a < b and c > d', redactor)).toBe('a < b and c > d')
    const long = bodyExcerpt('y'.repeat(5000), redactor)
    expect(long).toHaveLength(200)
    expect(long.endsWith('…')).toBe(true)
  })

  it.each([
    ['unclosed comments', '<!--'],
    ['unclosed scripts', '<script'],
    ['tags never closed', '<'],
    ['scripts that open tags', '<script><'],
    ['trailing dots', '.']
  ])('bodyExcerpt reads a megabyte page of %s in one pass', (_kind, unit) => {
    const page = `<html>${unit.repeat(Math.floor((1024 * 1024) / unit.length))} https://u:pw@h/`
    const excerpt = bodyExcerpt(page, redactor)
    expect(Array.from(excerpt).length).toBeLessThanOrEqual(200)
    expect(excerpt).not.toContain('pw')
  })

  it('a 2XX of the wrong shape names the call, the status, what was expected and what came', () => {
    const scene = {
      request: createChange,
      baseUrl: new URL('https://service.example/'),
      advice: ACTION_ADVICE,
      redactor,
      budgetMs: 60_000
    }
    const response = {
      status: 200,
      headers: {},
      body: `<html><body>Welcome ${API_KEY}</body></html>`
    }
    const expected = '{"id": "<string>"}'
    const error = failureError(scene, { type: 'unexpected', response, expected }, 1, false)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error.kind).toBe('protocol')
    expect(error.status).toBe(200)
    expect(error.call).toBe('POST /v2/change')
    expect(error.message).toBe(
      'POST /v2/change answered HTTP 200 OK, but not with the documented answer (expected {"id": "<string>"}); ' +
        "it sent: Welcome ***. Check the base-url input: it must point at the service's root."
    )
  })
})

describe('the words of a failure', () => {
  const scene = {
    request: createChange,
    baseUrl: new URL('https://service.example/'),
    advice: {
      changeWait: 'wait',
      checkAddress: 'look at the map',
      checkApiKey: 'ask the keeper'
    },
    redactor: new Redactor(),
    budgetMs: 60_000
  }

  const status = (code: number): Failure => ({
    type: 'status',
    response: { status: code, headers: {}, body: '{"message":"no"}' }
  })
  const network = (code: string): Failure => ({ type: 'network', code, message: 'said.' })

  it.each<[string, Failure, string | undefined, RegExp]>([
    [
      'a timeout',
      { type: 'timeout', deadlineMs: 30_000, budgetCut: false },
      undefined,
      /try again later, or wait\.$/
    ],
    [
      'an unknown host',
      network('ENOTFOUND'),
      undefined,
      /Look at the map: the host name may be mistyped\.$/
    ],
    [
      'an unknown proxy host',
      network('ENOTFOUND'),
      'proxy.example:8080',
      /: the proxy host proxy\.example:8080 was not found \(ENOTFOUND\)\. Check HTTPS_PROXY\.$/
    ],
    [
      'a peer that does not speak TLS',
      network('EPROTO'),
      undefined,
      /^POST \/v2\/change failed: https:\/\/service\.example:443 did not answer as an HTTPS server \(EPROTO: said\)\. Look at the map: it must be the service's HTTPS address\.$/
    ],
    [
      'a rejected key',
      status(401),
      undefined,
      /The service rejected the API key: ask the keeper\.$/
    ],
    [
      'a 404',
      status(404),
      undefined,
      /Look at the map \(it must be the service's root\) and any id in the request\.$/
    ],
    [
      'another 4XX',
      status(418),
      undefined,
      /rejected with HTTP 418 I'm a Teapot: no\. The service refused the request\.$/
    ],
    [
      'a status outside the interface',
      status(600),
      undefined,
      /^POST \/v2\/change got an unexpected HTTP 600: no\. Look at the map: it must point at the service\.$/
    ]
  ])("words %s with the caller's advice", (_what, failure, proxy, words) => {
    expect(failureError({ ...scene, proxy }, failure, 1, false).message).toMatch(words)
  })
})

describe('what is retried', () => {
  const networkError = (code: string): Error => Object.assign(new Error(code), { code })

  it.each([
    ['EAI_AGAIN', true],
    ['ECONNRESET', true],
    ['HPE_HEADER_OVERFLOW', true],
    ['ENOTFOUND', false],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', false]
  ])('network error %s: retried %s', (code, retried) => {
    expect(isRetryable(networkFailure(networkError(code)))).toBe(retried)
  })

  it('a socket hang up without a code, as a connection reset', () => {
    expect(networkFailure(new Error('socket hang up'))).toMatchObject({ code: 'ECONNRESET' })
  })

  it.each([
    [407, false],
    [403, false],
    [502, true],
    [undefined, true]
  ])('proxy answering %s to CONNECT: retried %s', (statusCode, retried) => {
    const error = Object.assign(new Error('tunnel'), { code: 'ERR_PROXY_TUNNEL', statusCode })
    expect(isRetryable(networkFailure(error))).toBe(retried)
  })
})

describe('nodeMessage', () => {
  it("drops Node's advice to run with --use-system-ca, keeping the reason", () => {
    expect(
      nodeMessage(
        'self-signed certificate; if the root CA is installed locally, try running Node.js with --use-system-ca'
      )
    ).toBe('self-signed certificate')
    expect(nodeMessage('socket hang up')).toBe('socket hang up')
  })
})
