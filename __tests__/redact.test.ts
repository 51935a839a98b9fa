import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { Redactor } from '../src/redact.ts'

const KEY = 'sk_live_Ab+/9"x'

function redactorFor(secret: string): Redactor {
  const redactor = new Redactor()
  redactor.add(secret)
  return redactor
}

describe('Redactor', () => {
  it('removes a password from any URL, keeping the rest readable', () => {
    const r = new Redactor()
    expect(r.redact('clone https://bot:hunter2@git.example/x.git and ftp://u:p@h')).toBe(
      'clone https://***@git.example/x.git and ftp://***@h'
    )
    expect(r.redact('mail a@b.example, see https://user@host/')).toBe(
      'mail a@b.example, see https://user@host/'
    )
  })

  it('returns bytes without a secret as the same buffer, and redacts those with one', () => {
    const r = redactorFor('s3cr3t-value')
    const clean = Buffer.from('{"a":"https://host/"}')
    expect(r.redactBytes(clean)).toBe(clean)
    expect(r.redactBytes(Buffer.from('x s3cr3t-value https://u:pw@h')).toString()).toBe(
      'x *** https://***@h'
    )
  })

  it('removes the secret and its URL-encoded and JSON-escaped forms', () => {
    const r = redactorFor('k/e"y')
    expect(r.redact('a k/e"y b k%2Fe%22y c k/e\\"y')).toBe('a *** b *** c ***')
  })

  it.each([
    [
      'lowercase percent-encoding',
      encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, e => e.toLowerCase())
    ],
    [
      'every byte percent-encoded',
      [...Buffer.from(KEY)].map(b => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('')
    ],
    [
      'every byte percent-encoded, lowercase',
      [...Buffer.from(KEY)].map(b => `%${b.toString(16).padStart(2, '0')}`).join('')
    ],
    [
      '\\u-escaped JSON',
      [...KEY].map(c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')
    ],
    [
      '\\u-escaped JSON, uppercase hex',
      [...KEY]
        .map(c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`)
        .join('')
    ]
  ])('removes the key %s', (_form, encoded) => {
    expect(redactorFor(KEY).redact(`echo: ${encoded}!`)).toBe('echo: ***!')
  })

  it('removes the key base64-encoded, alone or inside a longer base64 text at any alignment', () => {
    const r = redactorFor(KEY)
    for (const prefix of ['', 'u', 'us', 'user:']) {
      for (const url of [false, true]) {
        let encoded = Buffer.from(`${prefix}${KEY}`).toString('base64')
        if (url) encoded = encoded.replace(/\+/g, '-').replace(/\//g, '_')
        const shown = r.redact(`Basic ${encoded}`)
        // What remains can no longer be decoded back to the key.
        expect(shown).toContain('***')
        expect(Buffer.from(shown.slice(6).replace(/\*/g, ''), 'base64').toString()).not.toContain(
          KEY
        )
      }
    }
  })

  it('never leaves a secret readable in its plain, percent-encoded or JSON-escaped form', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 6, maxLength: 40 }), fc.string(), (secret, around) => {
        const r = redactorFor(secret)
        const forms = [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]
        for (const form of forms)
          expect(r.redact(`${around}${form}${around}`)).not.toContain(secret)
      })
    )
  })
})
