import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { parseBaseUrl } from '../../src/values/base-url.ts'
import { Inputs } from '../../src/settings.ts'
import { inputError } from '../support/input-error.ts'
import { hostileText, NUM_RUNS, resultOrInputError } from '../support/hostile-text.ts'

describe('parseBaseUrl', () => {
  it.each([
    ['http with credentials', 'http://alice:hunter2@host.example/', '"http://host.example"'],
    [
      'another scheme with credentials',
      'ftp://alice:hunter2@host.example/x',
      '"ftp://host.example"'
    ],
    [
      'an unparsable URL with credentials',
      'https://alice:hunter2@exa mple.com/',
      '"https://exa mple.com"'
    ],
    [
      'a query holding a token',
      'https://host.example:8443/?token=s3cr3t#fragsecret',
      '"https://host.example:8443"'
    ],
    ['credentials on https', 'https://alice:hunter2@host.example/', '"https://host.example"']
  ])('names only the scheme, host and port of %s', (_, raw, shown) => {
    const message = inputError(() => parseBaseUrl(raw)).message
    expect(message).toContain(shown)
    for (const secret of ['alice', 'hunter2', 's3cr3t', 'fragsecret'])
      expect(message).not.toContain(secret)
  })

  it.each([
    ['https://api.example.com', 'https://api.example.com/'],
    ['https://api.example.com/', 'https://api.example.com/'],
    ['https://host/api', 'https://host/api/'],
    ['https://host/api/', 'https://host/api/'],
    ['https://HOST:8443/a/b', 'https://host:8443/a/b/'],
    ['https://127.0.0.1:9000', 'https://127.0.0.1:9000/']
  ])('normalises %s to %s', (raw, expected) => {
    expect(parseBaseUrl(raw).href).toBe(expected)
  })

  it('resolves endpoint paths below the path prefix', () => {
    expect(new URL('v2/change', parseBaseUrl('https://host/api')).href).toBe(
      'https://host/api/v2/change'
    )
  })

  it('is required', () => {
    expect(inputError(() => parseBaseUrl('')).message).toMatch(/^Input "base-url" is required/)
  })

  it('refuses plain HTTP, saying the key would travel in clear text', () => {
    const error = inputError(() => parseBaseUrl('http://api.example.com'))
    expect(error.input).toBe(Inputs.BaseUrl)
    expect(error.message).toContain(
      'plain HTTP is refused because the API key would travel in clear text'
    )
  })

  it.each(['ftp://api.example.com', 'file:///etc/passwd', 'wss://api.example.com'])(
    'refuses %s, requiring HTTPS',
    raw => {
      expect(inputError(() => parseBaseUrl(raw)).message).toContain('HTTPS is required')
    }
  )

  it.each(['api.example.com', '/v2', 'https://', 'https://exa mple.com', 'not a url'])(
    'refuses %j as not an absolute HTTPS URL',
    raw => {
      expect(inputError(() => parseBaseUrl(raw)).message).toMatch(
        /^Input "base-url" must be an absolute HTTPS URL/
      )
    }
  )

  it('refuses a user name or password without quoting them', () => {
    const error = inputError(() => parseBaseUrl('https://admin:hunter2@api.example.com/'))
    expect(error.message).toContain('must not contain a user name or password')
    expect(error.message).not.toContain('hunter2')
  })

  it.each(['https://host/?a=1', 'https://host/?', 'https://host/#top', 'https://host/#'])(
    'refuses a query or fragment in %s',
    raw => {
      expect(inputError(() => parseBaseUrl(raw)).message).toContain(
        'must not have a query (?…) or fragment (#…)'
      )
    }
  )

  it('refuses control characters, which the URL parser would silently drop', () => {
    expect(inputError(() => parseBaseUrl('https://ho\tst/')).message).toContain('U+0009')
  })

  it('parseBaseUrl returns only https roots ending in "/", without query or fragment', () => {
    const urlText = fc.oneof(
      hostileText,
      fc.webUrl({ withQueryParameters: true, withFragments: true })
    )
    fc.assert(
      fc.property(urlText, raw => {
        const result = resultOrInputError(Inputs.BaseUrl, () => parseBaseUrl(raw))
        if (result === undefined) return
        expect(result.value.protocol).toBe('https:')
        expect(result.value.pathname.endsWith('/')).toBe(true)
        expect(result.value.href).not.toMatch(/[?#]/)
        expect(result.value.username + result.value.password).toBe('')
      }),
      { numRuns: NUM_RUNS }
    )
  })
})
