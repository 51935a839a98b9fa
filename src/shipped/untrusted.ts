/**
 * Reading outside JSON (GitHub's answers, the event payload) by its documented type without
 * trusting it: the server may be a proxy or a fake. `Untrusted<T>` keeps T's field names, so a
 * typo does not compile, but every field may be missing or null, every leaf is `unknown` until
 * checked, and a list must go through listOf(): reading never throws.
 */

declare const untrustedList: unique symbol

/** A list as an answer claims it: read it with listOf(), which checks that it is one. */
export interface UntrustedList<Item> {
  readonly [untrustedList]: Item
}

export type Untrusted<T> = T extends null | undefined
  ? null | undefined
  : T extends readonly (infer Item)[]
    ? UntrustedList<Item> | null | undefined
    : T extends object
      ? { readonly [K in keyof T]?: Untrusted<T[K]> } | null | undefined
      : unknown

/** The items of a list, or undefined when the value is not a list. */
export function listOf<Item>(
  value: UntrustedList<Item> | null | undefined
): Untrusted<Item>[] | undefined
export function listOf(value: unknown): unknown[] | undefined
export function listOf(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined
}

/** A value as an untrusted T (for a payload or answer typed `unknown`). */
export function untrusted<T>(value: unknown): Untrusted<T> {
  return value as Untrusted<T>
}

/** A non-empty string. */
export function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** A count or an id: a non-negative safe integer (a BigInt or 1e300 is not one). */
export function countOf(value: unknown): number | undefined {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined
}

/** A full commit SHA: 40 hex digits (SHA-1) or 64 (SHA-256 repositories). */
export function isFullSha(text: unknown): text is string {
  return typeof text === 'string' && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(text)
}

/** An ISO 8601 timestamp as GitHub writes them, of a real date; anything else is dropped. */
export function timestampOf(value: unknown): string | undefined {
  return typeof value === 'string' &&
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/.test(value) &&
    !Number.isNaN(Date.parse(value))
    ? value
    : undefined
}
