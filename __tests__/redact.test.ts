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
  it('removes the user information of any URL, a user name alone too, keeping the rest readable', () => {
    const r = new Redactor()
    expect(r.redact('clone https://bot:hunter2@git.example/x.git and ftp://u:p@h')).toBe(
      'clone https://***@git.example/x.git and ftp://***@h'
    )
    expect(r.redact('mail a@b.example, see https://glpat-TOKEN123@host/ and https://h/a@b')).toBe(
      'mail a@b.example, see https://***@host/ and https://h/a@b'
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

  describe('on a megabyte of text that looks like URLs', () => {
    // "a://" ends a scheme's pattern, and each "." is a word boundary where it could start again.
    const hostile = `${'a.'.repeat(512 * 1024)}a://x`

    it('takes one pass, and still removes a password placed at its start, middle and end', () => {
      const r = redactorFor(KEY)
      const url = 'https://bot:pw-123@git.example/'
      const text = `${url} ${hostile} ${url} ${hostile} ${url}`
      const redacted = r.redact(text)
      expect(redacted.split('https://***@git.example/')).toHaveLength(4)
      expect(redacted.includes('pw-123')).toBe(false)
      expect(r.redactBytes(Buffer.from(text)).includes('pw-123')).toBe(false)
      expect(r.redactBytes(Buffer.from(hostile)).length).toBe(hostile.length)
      expect(r.excerpt(text, 4000)).toMatch(/^https:\/\/\*\*\*@git\.example\/ a\.a/)
    })
  })

  it('removes the user information of any "://", whatever precedes it', () => {
    expect(new Redactor().redact('1ssh://u:p@h x://u:p@h ://u:p@h')).toBe(
      '1ssh://***@h x://***@h ://***@h'
    )
  })
})

describe('Redactor.excerpt', () => {
  it('is the start of the text, without secrets, ending in "…" only when cut', () => {
    const r = redactorFor(KEY)
    expect(r.excerpt(`say ${KEY} twice ${KEY}`, 100)).toBe('say *** twice ***')
    expect(r.excerpt('x'.repeat(300), 100)).toBe(`${'x'.repeat(99)}…`)
    expect(r.excerpt(`${KEY.repeat(1000)}`, 10)).toBe('*********…')
  })

  it('never shows a part of a secret that its cut split, wherever the secret falls', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 200 }),
        fc.constantFrom(KEY, encodeURIComponent(KEY), 'https://bot:pw-123456@h/'),
        (max, before, secret) => {
          const r = redactorFor(KEY)
          const text = `${'x'.repeat(before)}${secret}${'y'.repeat(500)}`
          const shown = r.excerpt(text, max)
          expect(Array.from(shown).length).toBeLessThanOrEqual(max)
          for (const part of [KEY.slice(0, 4), encodeURIComponent(KEY).slice(0, 6), 'pw-1']) {
            expect(shown).not.toContain(part)
          }
        }
      )
    )
  })

  it('hides a password, or a user name alone, that the cut left without its "@"', () => {
    const r = new Redactor()
    const text = `see https://bot:${'p'.repeat(10_000)}@git.example/`
    expect(r.excerpt(text, 50)).toBe('see https://***…')
    expect(r.excerpt(`see https://${'t'.repeat(10_000)}@git.example/`, 50)).toBe('see https://***…')
  })
})
