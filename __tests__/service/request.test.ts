/** Where a request goes and how messages name it: pure functions, no network. */
import { describe, expect, it } from '@jest/globals'
import { ServiceError } from '../../src/errors.ts'
import {
  callName,
  hostPort,
  MAX_SERVICE_URL_CHARS,
  requestUrl,
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

  it('refuses to build a URL over the bound, naming the call, so that it is never sent', () => {
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
      /^GET \/v2\/change\/c+ was not sent: a URL of \d+ characters is too long \(at most 400000\)/
    )
  })
})

describe('hostPort', () => {
  it('names host and port only, the default port told, never credentials, path or query', () => {
    expect(hostPort(new URL('https://robot:s3cret@service.example/api/?token=t#x'))).toBe(
      'service.example:443'
    )
    expect(hostPort(new URL('http://proxy.example'))).toBe('proxy.example:80')
    expect(hostPort(new URL('https://[::1]:9/'))).toBe('[::1]:9')
  })
})
