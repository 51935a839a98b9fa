/**
 * What the service said, read from an error body for a message: its message field, or else a
 * short excerpt of the body. Always redacted before it is cut.
 */
import type { Redactor } from '../redact.ts'
import { collapseWhitespace, truncateText } from '../text.ts'

/** A service message or body excerpt is cut to this many characters: enough to say why. */
const MAX_EXCERPT_CHARS = 200
const MESSAGE_FIELDS = ['message', 'error_description', 'error', 'detail', 'errors'] as const
/**
 * What the service said: the message field of a JSON error body, or else an excerpt of the body.
 * Redacted before it is shortened, so a cut can never leave part of a secret behind.
 */
export function extractServiceMessage(body: string, redactor: Redactor): string {
  const found = messageFromJson(body)
  if (found !== undefined) {
    const text = truncateText(collapseWhitespace(redactor.redact(found)), MAX_EXCERPT_CHARS)
    if (text) return text
  }
  return bodyExcerpt(redactor.redact(body))
}

function messageFromJson(body: string): string | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return undefined
  }
  if (typeof parsed === 'string') return parsed
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
  const record = parsed as Record<string, unknown>
  for (const field of MESSAGE_FIELDS) {
    const value = record[field]
    if (typeof value === 'string' && value.trim()) return value
    // { "error": { "message": "..." } } is common enough to look one level down.
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const nested = (value as Record<string, unknown>)['message']
      if (typeof nested === 'string' && nested.trim()) return nested
    }
    if (value !== undefined && value !== null && typeof value !== 'string')
      return JSON.stringify(value)
  }
  return undefined
}

/** One line, whitespace collapsed, HTML tags stripped if it looks like HTML, at most 200 chars. */
export function bodyExcerpt(body: string): string {
  let text = body
  if (/^\s*<(!doctype|html|head|body|\?xml|[a-z][a-z0-9]*[\s>])/i.test(text)) {
    text = text
      .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<!--[\s\S]*?-->/g, ' ')
      .replace(/<[^>]*>/g, ' ')
      .replace(/&nbsp;/g, ' ')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&')
  }
  text = collapseWhitespace(text)
  return text ? truncateText(text, MAX_EXCERPT_CHARS) : '(empty body)'
}
