/** The words of a failure: what the service said, and advice in the caller's words. */
import { describe, expect, it } from '@jest/globals'
import { ServiceError } from '../../src/errors.ts'
import { Redactor } from '../../src/redact.ts'
import {
  failureError,
  GENERIC_ADVICE,
  nodeMessage,
  unexpectedResponse
} from '../../src/service/failures.ts'
import type { ServiceRequest } from '../../src/service/request.ts'
import { bodyExcerpt, extractServiceMessage } from '../../src/service/service-message.ts'

const API_KEY = 'k3y-S3cr3t/value'
const ACTION_ADVICE = {
  raiseTimeout: 'raise the timeout-seconds input',
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
    expect(extractServiceMessage(body, redactor)).toBe(expected)
  })

  it('redacts before shortening, so no part of a key survives a cut', () => {
    const body = `${'x'.repeat(190)} ${API_KEY}`
    const excerpt = extractServiceMessage(body, redactor)
    expect(excerpt).toBe(`${'x'.repeat(190)} ***`)
  })

  it('bodyExcerpt makes one line of at most 200 characters, without HTML tags', () => {
    expect(bodyExcerpt('  \n\t ')).toBe('(empty body)')
    expect(bodyExcerpt('line one\n\n  line two')).toBe('line one line two')
    expect(
      bodyExcerpt(
        '<!DOCTYPE html><html><head><style>p{}</style><title>502</title></head><body><p>Bad&nbsp;gateway &amp; more</p></body></html>'
      )
    ).toBe('502 Bad gateway & more')
    expect(bodyExcerpt('a < b and c > d')).toBe('a < b and c > d')
    const long = bodyExcerpt('y'.repeat(5000))
    expect(long).toHaveLength(200)
    expect(long.endsWith('…')).toBe(true)
  })

  it('unexpectedResponse names the call, the status, what was expected and what came', () => {
    const error = unexpectedResponse(
      { request: createChange, advice: ACTION_ADVICE, redactor },
      { status: 200, headers: {}, body: `<html><body>Welcome ${API_KEY}</body></html>` },
      '{"id": "<string>"}'
    )
    expect(error).toBeInstanceOf(ServiceError)
    expect(error.kind).toBe('protocol')
    expect(error.status).toBe(200)
    expect(error.call).toBe('POST /v2/change')
    expect(error.serviceMessage).toBe('Welcome ***')
    expect(error.message).toBe(
      'POST /v2/change answered HTTP 200 OK, but not with the documented answer (expected {"id": "<string>"}); ' +
        "it sent: Welcome ***. Check the base-url input: it must point at the service's root."
    )
  })
})

describe('advice', () => {
  const scene = (advice = GENERIC_ADVICE) => ({
    request: createChange,
    baseUrl: new URL('https://service.example/'),
    advice,
    redactor: new Redactor(),
    budgetMs: 60_000
  })

  it("names no input of its own: without the caller's advice, the words are generic", () => {
    const messages = [
      failureError(scene(), { type: 'timeout', deadlineMs: 30_000, budgetCut: false }, 1, false),
      failureError(
        scene(),
        { type: 'network', code: 'ENOTFOUND', message: 'getaddrinfo' },
        1,
        false
      ),
      failureError(
        scene(),
        { type: 'status', response: { status: 401, headers: {}, body: '' } },
        1,
        false
      )
    ].map(error => error.message)
    expect(messages.join(' ')).not.toMatch(/input|base-url|api-key|timeout-seconds/)
    expect(messages[0]).toMatch(/or raise the timeout\.$/)
    expect(messages[1]).toMatch(/Check the service address: the host name may be mistyped\.$/)
    expect(messages[2]).toMatch(/check the API key and its permissions\.$/)
  })

  it("words each clause of the caller's advice into a sentence", () => {
    const error = failureError(
      scene(ACTION_ADVICE),
      { type: 'status', response: { status: 404, headers: {}, body: '' } },
      1,
      false
    )
    expect(error.message).toContain(
      "Check the base-url input (it must be the service's root) and any id in the request."
    )
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
