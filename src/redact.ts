export const REDACTED = '***'

/** The user-information part of a URL that carries a password: "scheme://user:password@". */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@:]*:[^\s/?#@]+@/gi
const HAS_URL_CREDENTIALS = new RegExp(URL_CREDENTIALS.source, 'i')

/** A secret's base64 forms are looked for only from this length: shorter runs occur by chance. */
const MIN_BASE64_SECRET_BYTES = 6

/**
 * Removes secrets from text before it is printed, written to an output or a summary, or put in
 * an error. Each secret is also removed in the forms a server might echo it back in: percent-
 * encoded (either hex case, or every byte encoded), JSON-escaped (including every character as
 * \uXXXX) and base64 (standard and URL-safe, at any alignment within a longer encoded text, as
 * in a Basic authorization header).
 */
export class Redactor {
  private readonly forms: string[] = []

  add(secret: string): void {
    if (!secret) return
    for (const form of secretForms(secret)) {
      if (form && !this.forms.includes(form)) this.forms.push(form)
    }
    // Longest first, so that a secret that contains another is removed whole.
    this.forms.sort((a, b) => b.length - a.length)
  }

  redact(text: string): string {
    let result = text
    for (const form of this.forms) {
      // Checked first: most text holds no secret, and split/join would copy it anyway.
      if (result.includes(form)) result = result.split(form).join(REDACTED)
    }
    // A password in a URL (https://user:password@host) is a secret nobody registered.
    if (result.includes('://')) result = result.replace(URL_CREDENTIALS, `$1${REDACTED}@`)
    return result
  }

  /**
   * A request body without secrets: the same bytes when it holds none (the usual case, checked
   * without decoding, so a 1 MB batch of events costs a few scans), else redacted as text.
   */
  redactBytes(bytes: Buffer): Buffer {
    const holdsSecret =
      this.forms.some(form => bytes.includes(form)) ||
      (bytes.includes('://') && HAS_URL_CREDENTIALS.test(bytes.toString('utf8')))
    return holdsSecret ? Buffer.from(this.redact(bytes.toString('utf8')), 'utf8') : bytes
  }
}

function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8')
  const percent = encodeURIComponent(secret)
  const everyBytePercent = [...bytes].map(byte => `%${hex2(byte)}`).join('')
  const everyCharUnicode = Array.from(
    { length: secret.length },
    (_, i) => `\\u${secret.charCodeAt(i).toString(16).padStart(4, '0')}`
  ).join('')
  return [
    secret,
    percent,
    lowerPercentHex(percent),
    everyBytePercent,
    everyBytePercent.toLowerCase(),
    JSON.stringify(secret).slice(1, -1),
    everyCharUnicode,
    everyCharUnicode.toUpperCase().replace(/\\U/g, '\\u'),
    ...base64Forms(bytes)
  ]
}

/** The base64 characters that depend only on the secret, for each of the 3 byte alignments. */
function base64Forms(bytes: Buffer): string[] {
  if (bytes.length < MIN_BASE64_SECRET_BYTES) return []
  const forms: string[] = []
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64')
    const start = Math.ceil((offset * 8) / 6)
    const end = Math.floor(((offset + bytes.length) * 8) / 6)
    const stable = encoded.slice(start, end)
    forms.push(stable, stable.replace(/\+/g, '-').replace(/\//g, '_'))
  }
  return forms
}

function hex2(byte: number): string {
  return byte.toString(16).toUpperCase().padStart(2, '0')
}

function lowerPercentHex(text: string): string {
  return text.replace(/%[0-9A-F]{2}/g, escape => escape.toLowerCase())
}
