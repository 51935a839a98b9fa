/** Reading fields from JSON of untrusted shape (GitHub's answers, the event payload) without throwing. */

/** The value at a path of object keys and array indexes; undefined when any step is missing. */
export function valueAt(value: unknown, ...path: (string | number)[]): unknown {
  let current = value
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined
    current = (current as Record<string | number, unknown>)[key]
  }
  return current
}

export function stringAt(value: unknown, ...path: (string | number)[]): string | undefined {
  const found = valueAt(value, ...path)
  return typeof found === 'string' && found !== '' ? found : undefined
}

export function integerAt(value: unknown, ...path: (string | number)[]): number | undefined {
  const found = valueAt(value, ...path)
  return Number.isSafeInteger(found) ? (found as number) : undefined
}

export function arrayAt(value: unknown, ...path: (string | number)[]): unknown[] | undefined {
  const found = valueAt(value, ...path)
  return Array.isArray(found) ? found : undefined
}

/** A full commit SHA: 40 hex digits (SHA-1) or 64 (SHA-256 repositories). */
export function isFullSha(text: string | undefined): text is string {
  return text !== undefined && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(text)
}

/** An ISO 8601 timestamp as GitHub writes them; anything else is dropped. */
export function timestampAt(value: unknown, ...path: (string | number)[]): string | undefined {
  const found = stringAt(value, ...path)
  return found && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/.test(found)
    ? found
    : undefined
}
