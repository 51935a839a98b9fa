/** Where a request goes and how messages name it: pure functions, no network. */
import { describe, expect, it } from '@jest/globals'
import { ServiceError } from '../../src/errors.ts'
import {
  addressName,
  callName,
  MAX_SERVICE_URL_CHARS,
  requestUrl,
  serviceRoot,
  type ServiceRequest
} from '../../src/service/request.ts'

describe('requestUrl and callName', () => {
  it('builds URLs below a base path prefix, with the query', () => {
    const request: ServiceRequest = {
      method: 'GET',
      path: 'v2/change/a%2Fb',
      query: 'ids=a%2Cb,c'
    }
    expect(requestUrl(new URL('https://service.example/api/'), request).href).toBe(
      'https://service.example/api/v2/change/a%2Fb?ids=a%2Cb,c'
    )
    expect(callName(request)).toBe('GET /v2/change/a%2Fb')
  })

  it("adds the trailing slash a base URL lacks, drops the base's credentials, query and fragment, and keeps a leading-slash path below the prefix", () => {
    const base = serviceRoot(new URL('https://user:pass@service.example/api?token=t#f'))
    expect(requestUrl(base, { method: 'GET', path: '/v2/hello' }).href).toBe(
      'https://service.example/api/v2/hello'
    )
    expect(requestUrl(base, { method: 'GET', path: '//other.example/v2/hello' }).origin).toBe(
      'https://service.example'
    )
  })

  it('refuses a path that climbs out of the service root', () => {
    expect(() =>
      requestUrl(new URL('https://service.example/api/'), { method: 'GET', path: '../admin' })
    ).toThrow(/leaves the service root/)
  })
})

describe('addressName', () => {
  it('names scheme, host and port only, never credentials, path, query or fragment', () => {
    expect(addressName(new URL('https://robot:s3cret@service.example/api/?token=t#x'))).toBe(
      'https://service.example:443'
    )
    expect(addressName(new URL('https://127.0.0.1:8443/'))).toBe('https://127.0.0.1:8443')
    expect(addressName(new URL('https://[::1]:9/'))).toBe('https://[::1]:9')
  })
})

describe('a URL the action refuses to build', () => {
  it('is named as refused, with the call, never sent as an unreachable one', () => {
    const request = {
      method: 'GET' as const,
      path: `v2/change/${'c'.repeat(MAX_SERVICE_URL_CHARS)}`
    }
    let error: unknown
    try {
      requestUrl(new URL('https://service.example/'), request)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ServiceError)
    expect((error as ServiceError).kind).toBe('configuration')
    expect((error as Error).message).toMatch(
      /^GET \/v2\/change\/c+ was not sent: the action refuses to build a URL of \d+ characters \(at most 400000\)/
    )
  })
})
