import { describe, expect, it } from '@jest/globals'
import {
  isJsonObject,
  jsonDepthExceededAt,
  MAX_JSON_DEPTH,
  parseJsonSafely
} from '../../src/helpers/json.ts'

describe('JSON nesting', () => {
  it('finds where text first nests deeper than the bound, ignoring brackets in strings', () => {
    expect(jsonDepthExceededAt('[[["[[[["]]]', 3)).toBe(-1)
    expect(jsonDepthExceededAt('{"a":[[{}]]}', 3)).toBe(7)
    expect(jsonDepthExceededAt(Buffer.from('{"a\\"[":[[[1]]]}'), 3)).toBe(10)
  })
})

describe('parseJsonSafely', () => {
  it('reads JSON text or bytes, and is undefined for anything else, never throwing', () => {
    expect(parseJsonSafely('{"a":[1]}')).toEqual({ a: [1] })
    expect(parseJsonSafely(Buffer.from('"OK"'))).toBe('OK')
    expect(parseJsonSafely('')).toBeUndefined()
    expect(parseJsonSafely('{"a":')).toBeUndefined()
  })

  it('refuses text nested deeper than the bound before parsing it', () => {
    const deep = `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`
    expect(parseJsonSafely(deep)).toBeUndefined()
    expect(parseJsonSafely(deep.slice(1, -1))).toBeDefined()
  })
})

describe('isJsonObject', () => {
  it('is an object that is neither null, an array nor a number kept as written', () => {
    expect(isJsonObject({})).toBe(true)
    expect([null, [], 'a', 1].some(isJsonObject)).toBe(false)
    const { rawJSON } = JSON as unknown as { rawJSON: (text: string) => unknown }
    expect(isJsonObject(rawJSON('1e400'))).toBe(false)
  })
})
