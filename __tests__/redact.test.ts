import { describe, expect, it } from '@jest/globals'
import { Redactor } from '../src/redact.ts'

describe('Redactor', () => {
  it('removes the secret and its URL-encoded and JSON-escaped forms', () => {
    const r = new Redactor()
    r.add('k/e"y')
    expect(r.redact('a k/e"y b k%2Fe%22y c k/e\\"y')).toBe('a *** b *** c ***')
  })
})
