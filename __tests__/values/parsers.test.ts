import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { COMMANDS, FAIL_ON_ERROR_MODES, Inputs } from '../../src/settings.ts'
import {
  parseBoolean,
  parseIncludeCommits,
  parseEventIds,
  parseJobStatus,
  parseJson,
  parseLabels,
  parseOneOf,
  parseRef,
  parseToken,
  parseWholeNumber,
  parseWord
} from '../../src/values/parsers.ts'
import { hasUnsafeCharacter } from '../../src/helpers/text.ts'
import { inputError } from '../support/input-error.ts'
import {
  COMMAND_NAMES,
  hostileText,
  NUM_RUNS,
  resultOrInputError
} from '../support/hostile-text.ts'

describe('parseBoolean', () => {
  it.each([
    ['true', true],
    ['True', true],
    ['TRUE', true],
    ['false', false],
    ['False', false],
    ['FALSE', false]
  ])('reads %j as %j', (raw, expected) => {
    expect(parseBoolean('dry-run', raw)).toBe(expected)
  })

  it.each(['yes', 'no', 'on', 'off', '1', '0', 'y', 'tru', '', 'true false'])(
    'refuses %j, naming the input',
    raw => {
      const error = inputError(() => parseBoolean('job-summary', raw))
      expect(error.input).toBe('job-summary')
      expect(error.message).toBe(
        `Input "job-summary" must be true or false; got ${JSON.stringify(raw)}.`
      )
    }
  )
})

describe('parseIncludeCommits', () => {
  it.each([
    ['true', { includeCommits: true, commitsFrom: 'api' }],
    ['FALSE', { includeCommits: false, commitsFrom: 'api' }],
    [' git ', { includeCommits: true, commitsFrom: 'git' }],
    ['Git', { includeCommits: true, commitsFrom: 'git' }]
  ])('reads %j', (raw, expected) => {
    expect(parseIncludeCommits(raw)).toEqual(expected)
  })

  it('refuses anything else, naming the three values', () => {
    expect(inputError(() => parseIncludeCommits('api')).message).toBe(
      'Input "include-commits" must be true, false or git; got "api".'
    )
  })
})

describe('parseWholeNumber', () => {
  it.each([
    ['1', 1],
    ['30', 30],
    ['300', 300],
    ['030', 30]
  ])('reads %j as %j', (raw, expected) => {
    expect(parseWholeNumber('timeout-seconds', raw, 1, 300)).toBe(expected)
  })

  it.each([
    '0',
    '301',
    '-1',
    '1.5',
    '1e2',
    '0x10',
    '',
    ' ',
    'abc',
    '30s',
    '9'.repeat(400),
    'Infinity'
  ])('refuses %j with the accepted range', raw => {
    const error = inputError(() => parseWholeNumber('timeout-seconds', raw, 1, 300))
    expect(error.input).toBe('timeout-seconds')
    expect(error.message).toMatch(
      /^Input "timeout-seconds" must be a whole number from 1 to 300; got "/
    )
  })
})

describe('parseOneOf', () => {
  const parseCommand = (raw: string) => parseOneOf(Inputs.Command, COMMANDS, raw)

  it.each(COMMAND_NAMES)('accepts the command %s', command => {
    expect(parseCommand(command)).toBe(command)
  })

  it.each(['deploy', 'Change', 'heartbeats', ''])('refuses %j, listing the commands', raw => {
    const error = inputError(() => parseCommand(raw))
    expect(error.input).toBe(Inputs.Command)
    expect(error.message).toBe(
      `Input "command" must be one of change, heartbeat, events, event-results, get-change, hello; got ${JSON.stringify(raw)}.`
    )
  })
})

describe('parseWord: fail-on-error', () => {
  const parseFailOnError = (raw: string) => parseWord(Inputs.FailOnError, FAIL_ON_ERROR_MODES, raw)

  it.each([
    ['auto', 'auto'],
    ['AUTO', 'auto'],
    ['true', 'true'],
    ['False', 'false']
  ])('reads %j as %j', (raw, expected) => {
    expect(parseFailOnError(raw)).toBe(expected)
  })

  it.each(['yes', 'always', '', '1'])('refuses %j', raw => {
    expect(inputError(() => parseFailOnError(raw)).message).toBe(
      `Input "fail-on-error" must be auto, true or false; got ${JSON.stringify(raw)}.`
    )
  })
})

describe('parseLabels', () => {
  it.each([
    ['a,b,c', ['a', 'b', 'c']],
    [' a , b ,c ', ['a', 'b', 'c']],
    ['a\nb\r\nc\rd', ['a', 'b', 'c', 'd']],
    ['a,\n,b,,', ['a', 'b']],
    ['b,a,b,a', ['b', 'a']],
    ['team: platform, tier 1', ['team: platform', 'tier 1']],
    ['🚀,東京', ['🚀', '東京']]
  ])('reads %j as %j', (raw, expected) => {
    expect(parseLabels(raw)).toEqual(expected)
  })

  it.each(['', ' ', ',', ' , \n ,'])('is undefined for %j', raw => {
    expect(parseLabels(raw)).toBeUndefined()
  })

  it('refuses control characters inside a label', () => {
    const error = inputError(() => parseLabels('ok,a\u0000b'))
    expect(error.input).toBe(Inputs.Labels)
    expect(error.message).toBe(
      'Input "labels" must not contain control, invisible, line-separating or bidirectional characters; found U+0000 at character 2 in "a\\u0000b".'
    )
  })

  it.each([
    ['a zero-width space', '\u200b', 'U+200B'],
    ['a zero-width non-joiner', '\u200c', 'U+200C'],
    ['a zero-width joiner', '\u200d', 'U+200D'],
    ['a word joiner', '\u2060', 'U+2060'],
    ['a byte order mark', '\ufeff', 'U+FEFF'],
    ['a right-to-left override', '\u202e', 'U+202E'],
    ['a line separator', '\u2028', 'U+2028']
  ])('refuses %s inside a label, naming it', (_, character, name) => {
    const error = inputError(() => parseLabels(`ok,outcome:${character}success`))
    expect(error.input).toBe(Inputs.Labels)
    expect(error.message).toMatch(/^Input "labels" must not contain control, invisible, /)
    expect(error.message).toContain(`; found ${name} at character 9 in "outcome:`)
  })
})

describe('parseJson', () => {
  it.each([
    ['{"a": {"b": [1, 2]}}', { a: { b: [1, 2] } }],
    ['[1, "two"]', [1, 'two']],
    ['"text"', 'text'],
    ['42', 42],
    ['null', null],
    ['true', true]
  ])('reads %s', (raw, expected) => {
    expect(parseJson('custom-metadata', raw)).toEqual(expected)
  })

  it('is undefined when empty', () => {
    expect(parseJson('custom-metadata', '')).toBeUndefined()
  })

  it('names the input and the line and column where parsing failed', () => {
    expect(inputError(() => parseJson('custom-metadata', '{\n  "a": 1,\n  b: 2\n}')).message).toBe(
      `Input "custom-metadata" must be valid JSON, such as {"ticket": "OPS-42"}: expected double-quoted property name at line 3, column 3; got "{\\n  \\"a\\": 1,\\n  b: 2\\n}".`
    )
  })

  it.each([
    ['{"a":', 'it ends early'],
    ['abc', 'unexpected character "a"'],
    ['{"a":1}x', 'unexpected non-whitespace character after JSON at line 1, column 8']
  ])('explains why %j is not JSON', (raw, why) => {
    const error = inputError(() => parseJson('custom-metadata', raw))
    expect(error.input).toBe('custom-metadata')
    expect(error.message).toContain(`: ${why}; got `)
  })

  it('refuses JSON nested deeper than the bound, naming the line, and accepts it at the bound', () => {
    const deep = `{"a":\n${'['.repeat(20_000)}${']'.repeat(20_000)}}`
    expect(inputError(() => parseJson('custom-metadata', deep)).message).toMatch(
      /^Input "custom-metadata" nests JSON deeper than 512 levels \(at line 2, column 512\)/
    )
    expect(parseJson('custom-metadata', `${'['.repeat(512)}${']'.repeat(512)}`)).toBeDefined()
  })

  it('does not repeat the parser message, which quotes the input unescaped', () => {
    const error = inputError(() => parseJson('custom-metadata', `[1,\u0007${'x'.repeat(100)}`))
    expect(error.message).not.toMatch(/\p{Cc}/u)
    expect(error.message).not.toContain('x'.repeat(50))
  })
})

describe('parseEventIds', () => {
  it.each([
    ['e1,e2,e3', ['e1', 'e2', 'e3']],
    [' e1 , e2 ,, ', ['e1', 'e2']],
    ['e1\ne2', ['e1', 'e2']],
    ['a,b\r\nc,d', ['a,b', 'c,d']],
    ['["a,b", "c"]', ['a,b', 'c']],
    [' ["a"] ', ['a']],
    ['e1,e2,e1', ['e1', 'e2']],
    ['["x", "x", "y"]', ['x', 'y']],
    ['{"not":"an array"}', ['{"not":"an array"}']]
  ])('reads %j as %j', (raw, expected) => {
    expect(parseEventIds(raw)).toEqual(expected)
  })

  it.each(['', ',', '\n\n', '[]'])('is undefined for %j', raw => {
    expect(parseEventIds(raw)).toBeUndefined()
  })

  it.each([
    ['[1, 2]', 'element 1 is 1'],
    ['["a", ""]', 'element 2 is ""'],
    ['["a", "  "]', 'element 2 is "  "'],
    ['["a", null]', 'element 2 is null'],
    ['["a", ["b"]]', 'element 2 is ["b"]'],
    ['["a",', 'it ends early'],
    ['[a]', 'unexpected character "a"']
  ])('refuses %j, which starts like a JSON array', (raw, detail) => {
    const error = inputError(() => parseEventIds(raw))
    expect(error.input).toBe(Inputs.EventIds)
    expect(error.message).toMatch(
      /^Input "event-ids" starts with "\[", so it must be a JSON array of non-empty strings/
    )
    expect(error.message).toContain(detail)
  })

  it('refuses control characters and "." ids', () => {
    expect(inputError(() => parseEventIds('a,b\u0000c')).input).toBe(Inputs.EventIds)
    expect(inputError(() => parseEventIds('["a\\tb"]')).input).toBe(Inputs.EventIds)
    expect(inputError(() => parseEventIds('a,..')).input).toBe(Inputs.EventIds)
  })
})

describe('quoted values in messages', () => {
  it('quote at most 40 characters of 100 KB of junk, with its length', () => {
    const error = inputError(() => parseWholeNumber('timeout-seconds', 'x'.repeat(100_000), 1, 300))
    expect(error.message.length).toBeLessThan(200)
    expect(error.message).toContain(`"${'x'.repeat(39)}…" (100000 characters)`)
  })

  it("never quote part of a URL's credentials that the cut splits", () => {
    for (let shift = 0; shift < 40; shift++) {
      const raw = `${'x'.repeat(shift)}https://deploy:Zq9SuperSecretPassword@host/x`
      const error = inputError(() => parseWholeNumber('timeout-seconds', raw, 1, 300))
      expect(error.message).not.toMatch(/Zq9S|cretP|ssword/)
    }
  })

  it('escape control characters, line separators and bidi overrides', () => {
    const error = inputError(() =>
      parseBoolean('dry-run', 'a\nb\u0000c\u0085d\u2028e\u202ef\u0007')
    )
    expect(error.message).toContain('"a\\nb\\u0000c\\u0085d\\u2028e\\u202ef\\u0007"')
    expect(error.message).not.toMatch(/[\p{Cc}\u2028\u2029\u202e]/u)
  })

  it('do not cut an emoji in half', () => {
    const error = inputError(() => parseBoolean('dry-run', `${'x'.repeat(39)}🚀🚀`))
    expect(error.message).toContain(`"${'x'.repeat(39)}…"`)
    expect(error.message).not.toMatch(/\\ud83d/)
  })
})

describe('parseRef', () => {
  it.each(['a b', 'main..dev', 'v1~2', 'x'.repeat(256), 'tag\u0007'])(
    'refuses %j, which is no SHA, tag or branch',
    raw => {
      expect(inputError(() => parseRef('previous-version', raw)).input).toBe('previous-version')
    }
  )
})

describe('parseToken', () => {
  it('refuses a token with spaces without quoting it', () => {
    const error = inputError(() => parseToken('github-token', 'ghp_abc def'))
    expect(error.input).toBe('github-token')
    expect(error.message).not.toContain('ghp_abc')
  })
})

describe('parseJobStatus', () => {
  it.each([
    ['success', 'success'],
    ['failure', 'failure'],
    ['cancelled', 'cancelled'],
    [' Failure ', 'failure'],
    ['skipped', 'unknown'],
    ['', 'unknown'],
    ['${{ job.status }}', 'unknown']
  ])('reads %j as %s', (status, outcome) => {
    expect(parseJobStatus(status).outcome).toBe(outcome)
  })
})

describe('parser properties', () => {
  it('parseLabels never returns an empty, untrimmed, duplicate or comma-holding label', () => {
    const labelText = fc.oneof(
      hostileText,
      fc
        .array(fc.constantFrom('a', 'b', ' a', 'b ', '', ' ', '🚀', 'x,y', '\n', '\r\n'), {
          maxLength: 12
        })
        .map(parts => parts.join(','))
    )
    fc.assert(
      fc.property(labelText, raw => {
        const result = resultOrInputError(Inputs.Labels, () => parseLabels(raw))
        if (result === undefined || result.value === undefined) return
        const labels = result.value
        expect(labels.length).toBeGreaterThan(0)
        expect(new Set(labels).size).toBe(labels.length)
        for (const label of labels) {
          expect(label).not.toBe('')
          expect(label).toBe(label.trim())
          expect(label).not.toMatch(/[,\r\n]/)
        }
      }),
      { numRuns: NUM_RUNS }
    )
  })

  it('parseWholeNumber stays within its bounds and reads back every number in them', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.oneof(hostileText, fc.integer({ min: -10, max: 2000 }).map(String)),
        (a, b, raw) => {
          const [min, max] = a <= b ? [a, b] : [b, a]
          const result = resultOrInputError('n', () => parseWholeNumber('n', raw, min, max))
          if (result !== undefined) {
            expect(Number.isInteger(result.value)).toBe(true)
            expect(result.value).toBeGreaterThanOrEqual(min)
            expect(result.value).toBeLessThanOrEqual(max)
          }
          expect(parseWholeNumber('n', String(min), min, max)).toBe(min)
          expect(parseWholeNumber('n', String(max), min, max)).toBe(max)
        }
      ),
      { numRuns: NUM_RUNS }
    )
  })

  it('parseBoolean accepts only true and false, in any letter case', () => {
    fc.assert(
      fc.property(hostileText, raw => {
        const result = resultOrInputError('flag', () => parseBoolean('flag', raw))
        const word = raw.trim().toLowerCase()
        expect(result?.value).toBe({ true: true, false: false }[word as 'true' | 'false'])
      }),
      { numRuns: NUM_RUNS }
    )
  })

  it('parseEventIds returns trimmed, unique, non-empty ids, and reads a JSON array back', () => {
    const id = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 12 })
      .filter(text => text.trim() === text && text !== '' && text !== '.' && text !== '..')
      .filter(text => !hasUnsafeCharacter(text))
    fc.assert(
      fc.property(hostileText, fc.array(id, { minLength: 1, maxLength: 20 }), (raw, ids) => {
        const result = resultOrInputError(Inputs.EventIds, () => parseEventIds(raw))
        if (result?.value !== undefined) {
          expect(new Set(result.value).size).toBe(result.value.length)
          for (const eventId of result.value) {
            expect(eventId).not.toBe('')
            expect(eventId).toBe(eventId.trim())
          }
        }
        expect(parseEventIds(JSON.stringify(ids))).toEqual([...new Set(ids)])
      }),
      { numRuns: NUM_RUNS }
    )
  })
})
