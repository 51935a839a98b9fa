import { truncateText } from './helpers/text.ts'

export const REDACTED = '***'

/**
 * The user information after a "://" ("user:password@", or a user name alone, which is often a
 * token: "https://TOKEN@host"), matched only where a "://" was found (sticky). It may not hold a
 * "/", so no character is read for two "://"s: the whole scan is linear, whatever the text holds.
 * A pattern free to start anywhere (at each word boundary before a scheme) took time in the
 * square of a text like "a.a.a…a://x".
 */
const URL_USER_INFO = /[^\s/?#@]+@/y
/**
 * The same, or what a cut left after a "://" without its "@": nothing shows the start of a
 * credential (a host cut there is hidden too, since the two cannot be told apart).
 */
const URL_USER_INFO_CUT = /[^\s/?#@]*(?:@|$)/y

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
    for (const form of secretForms(secret)) {
      if (form && !this.forms.includes(form)) this.forms.push(form)
    }
    // Longest first, so that a secret that contains another is removed whole.
    this.forms.sort((a, b) => b.length - a.length)
  }

  /**
   * At most `max` code points of outside text, without secrets, ending in "…" when cut. Cut before
   * it is scanned: only a window of it is redacted, wide enough for `max` code points and for a
   * secret that begins within them. What the window's end may have cut in half is dropped.
   */
  excerpt(text: string, max: number): string {
    // 2 × max UTF-16 units hold at least max code points.
    const longest = this.forms[0]?.length ?? 0
    const window = 2 * max + longest
    if (text.length <= window) return truncateText(this.redact(text), max)
    const redacted = this.redact(text.slice(0, window), true)
    // A secret that the cut split was not removed: what shows of it is the last characters, after
    // the last "***" and fewer than the longest form's. They are dropped.
    const last = redacted.lastIndexOf(REDACTED)
    const after = last === -1 ? redacted.length : redacted.length - last - REDACTED.length
    let end = redacted.length - Math.min(after, Math.max(0, longest - 1))
    if (isHighSurrogate(redacted.charCodeAt(end - 1))) end--
    return truncateText(`${redacted.slice(0, end)}…`, max)
  }

  /**
   * The whole text without secrets, in time linear in its length. `cut`: the text is the start of
   * a longer one, which may end in the middle of a URL's password.
   */
  redact(text: string, cut = false): string {
    let result = text
    for (const form of this.forms) {
      // Checked first: most text holds no secret, and split/join would copy it anyway.
      if (result.includes(form)) result = result.split(form).join(REDACTED)
    }
    // A URL's user information (https://user:password@host) is a secret nobody registered.
    return withoutUrlUserInfo(result, cut ? URL_USER_INFO_CUT : URL_USER_INFO)
  }

  /**
   * A request body without secrets: the same bytes when it holds none (the usual case, checked
   * without decoding, so a 1 MB batch of events costs a few scans), else redacted as text.
   */
  redactBytes(bytes: Buffer): Buffer {
    if (!bytes.includes('://') && !this.forms.some(form => bytes.includes(form))) return bytes
    const text = bytes.toString('utf8')
    const redacted = this.redact(text)
    return redacted === text ? bytes : Buffer.from(redacted, 'utf8')
  }
}

/** The first half of a surrogate pair: a cut right after it would split a character. */
function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

/** A URL without its user information (a user name alone too); any other text as it is. */
export function withoutUserInfo(text: string): string {
  const url = URL.parse(text)
  if (!url?.username && !url?.password) return text
  url.username = ''
  url.password = ''
  return url.href
}

/** "https://user:password@host" as "https://***@host", in one pass over the "://"s. */
function withoutUrlUserInfo(text: string, userInfo: RegExp): string {
  let result = ''
  let copied = 0
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', at + 3)) {
    userInfo.lastIndex = at + 3
    const match = userInfo.exec(text)
    if (!match) continue
    result += `${text.slice(copied, at + 3)}${REDACTED}`
    copied = at + 3 + match[0].length - (match[0].endsWith('@') ? 1 : 0)
  }
  return copied === 0 ? text : result + text.slice(copied)
}

function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8')
  const percent = encodeURIComponent(secret)
  const everyBytePercent = bytes.toString('hex').replace(/../g, '%$&')
  const everyCharUnicode = Array.from(
    { length: secret.length },
    (_, i) => `\\u${secret.charCodeAt(i).toString(16).padStart(4, '0')}`
  ).join('')
  return [
    secret,
    percent,
    percent.replace(/%[0-9A-F]{2}/g, escape => escape.toLowerCase()),
    everyBytePercent.toUpperCase(),
    everyBytePercent,
    JSON.stringify(secret).slice(1, -1),
    everyCharUnicode,
    everyCharUnicode.toUpperCase().replace(/\\U/g, '\\u'),
    ...base64Forms(bytes)
  ]
}

/** The base64 characters that depend only on the secret, for each of the 3 byte alignments. */
function base64Forms(bytes: Buffer): string[] {
  if (bytes.length < MIN_BASE64_SECRET_BYTES) return []
  return [0, 1, 2].flatMap(offset => {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64')
    const start = Math.ceil((offset * 8) / 6)
    const end = Math.floor(((offset + bytes.length) * 8) / 6)
    const stable = encoded.slice(start, end)
    return [stable, stable.replace(/\+/g, '-').replace(/\//g, '_')]
  })
}
