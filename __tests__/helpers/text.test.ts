import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import {
  escapeControls,
  inert,
  plural,
  truncateText,
  withoutFinalStop
} from '../../src/helpers/text.ts'
import { anyCodePoint } from '../support/hostile-text.ts'

describe('inert', () => {
  it('escapes line breaks, ESC and bidi controls visibly, keeping everything else', () => {
    expect(inert('a\nb\r\nc\u001b[31md\u202ee\u2028f\u2066g')).toBe(
      'a\\nb\\r\\nc\\u001b[31md\\u202ee\\u2028f\\u2066g'
    )
    expect(inert('Déploiement 🚀 "ok"')).toBe('Déploiement 🚀 "ok"')
  })

  it('never leaves a character that could end a line or steer the terminal', () => {
    // Judged by code point, apart from the implementation: C0 and C1 controls (line breaks and
    // ESC among them), DEL, the Unicode line and paragraph separators, bidi marks and overrides.
    const steers = (point: number): boolean =>
      point < 0x20 ||
      (point >= 0x7f && point <= 0x9f) ||
      point === 0x2028 ||
      point === 0x2029 ||
      point === 0x200e ||
      point === 0x200f ||
      (point >= 0x202a && point <= 0x202e) ||
      (point >= 0x2066 && point <= 0x2069)
    fc.assert(
      fc.property(fc.string({ unit: anyCodePoint }), text => {
        const points = Array.from(inert(text), character => character.codePointAt(0) ?? 0)
        expect(points.filter(steers)).toEqual([])
      })
    )
  })

  it('breaks the legacy ##[ command wherever it is, and :: at the start after whitespace', () => {
    expect(inert('sig-1 ##[set-output name=change-id;]pwned')).toBe(
      'sig-1 #\\u0023[set-output name=change-id;]pwned'
    )
    expect(inert('###[a] ##[b]')).toBe('##\\u0023[a] #\\u0023[b]')
    expect(inert(' \u00a0::add-mask::x')).toBe(' \u00a0\\u003a:add-mask::x')
    // Mid-line, :: is no command: a URL or a C++ name stays as written.
    expect(inert('see std::vector and http://[::1]:80')).toBe('see std::vector and http://[::1]:80')
  })

  it('leaves no ##[ and no leading :: in any text, and is stable when applied twice', () => {
    const risky = fc
      .array(
        fc.oneof(fc.constantFrom('#', '##[', '[', ':', '::', ' ', '\u3000', '\n'), fc.string())
      )
      .map(parts => parts.join(''))
    fc.assert(
      fc.property(risky, text => {
        const once = inert(text)
        expect(once.includes('##[')).toBe(false)
        expect(once.trimStart().startsWith('::')).toBe(false)
        expect(inert(once)).toBe(once)
      })
    )
  })

  it('keeps JSON text valid and equal in meaning, with command prefixes in its strings', () => {
    const text = fc.oneof(
      fc.string(),
      fc.constantFrom('##[set-output name=x;]y', '::warning::x', ' ::x', '#')
    )
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: anyCodePoint }), text, (value, extra) => {
        const json = JSON.stringify([value, extra, { [extra]: extra }])
        expect(JSON.parse(inert(json))).toEqual(JSON.parse(json))
      })
    )
  })
})

describe('escapeControls', () => {
  it('escapes control characters but leaves command prefixes for text the runner never reads', () => {
    expect(escapeControls('a\n##[b] ::c')).toBe('a\\n##[b] ::c')
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

describe('withoutFinalStop', () => {
  it('drops the final full stops, in one pass over a megabyte of them', () => {
    expect(withoutFinalStop(' Done... ')).toBe('Done')
    const dots = '.'.repeat(1024 * 1024)
    expect(withoutFinalStop(`${dots}x`)).toHaveLength(dots.length + 1)
    expect(withoutFinalStop(`x${dots}`)).toBe('x')
  })
})
