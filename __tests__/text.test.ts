import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { exceedsJsonDepth, jsonDepthExceededAt } from '../src/json.ts'
import { inert, plural, truncateText } from '../src/text.ts'

describe('inert', () => {
  it('escapes line breaks, ESC and bidi controls visibly, keeping everything else', () => {
    expect(inert('a\nb\r\nc\u001b[31md\u202ee\u2028f\u2066g')).toBe(
      'a\\nb\\r\\nc\\u001b[31md\\u202ee\\u2028f\\u2066g'
    )
    expect(inert('Déploiement 🚀 "ok"')).toBe('Déploiement 🚀 "ok"')
  })

  it('never leaves a character that could end a line or steer the terminal', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), text => {
        expect(inert(text)).not.toMatch(
          /[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/u
        )
      })
    )
  })

  it('keeps JSON text valid and equal in meaning', () => {
    fc.assert(
      fc.property(fc.jsonValue(), value => {
        const json = JSON.stringify(value)
        expect(JSON.parse(inert(json))).toEqual(JSON.parse(json))
      })
    )
  })
})

describe('truncateText', () => {
  it('cuts to the given number of code points, never inside an emoji', () => {
    expect(truncateText('🚀🚀🚀', 2)).toBe('🚀…')
    expect(truncateText('short', 10)).toBe('short')
  })
})

describe('plural', () => {
  it('says 1 event and 2 events', () => {
    expect(plural(1, 'event')).toBe('1 event')
    expect(plural(2, 'event')).toBe('2 events')
    expect(plural(0, 'batch', 'batches')).toBe('0 batches')
  })
})

describe('JSON nesting', () => {
  it('finds where text first nests deeper than the bound, ignoring brackets in strings', () => {
    expect(jsonDepthExceededAt('[[["[[[["]]]', 3)).toBe(-1)
    expect(jsonDepthExceededAt('{"a":[[{}]]}', 3)).toBe(7)
    expect(exceedsJsonDepth(Buffer.from('{"a\\"[":[[[1]]]}'), 3)).toBe(true)
  })
})
