import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { checkServiceGlobs, parseServices } from '../../src/services/definition.ts'
import { InputError } from '../../src/errors.ts'
import type { ServiceSpec } from '../../src/settings.ts'
import { Inputs } from '../../src/settings.ts'
import { hasUnsafeCharacter } from '../../src/helpers/text.ts'
import { inputError } from '../support/input-error.ts'

/** The error's message, checked to be one safe line that names the input and the line. */
function problem(raw: string, line: number): string {
  const error = inputError(() => parseServices(raw))
  expect(error.input).toBe(Inputs.Services)
  expect(error.message).toContain(`Input "services", line ${line},`)
  expect(hasUnsafeCharacter(error.message)).toBe(false)
  return error.message
}

describe('parseServices', () => {
  it('reads NAME and NAME: PATTERN … lines with their line numbers, skipping blanks and comments', () => {
    const raw = [
      '# services of the shop',
      'api: services/api/** libs/common/**',
      '',
      '   ',
      'web: apps/web/** !apps/web/**/*.md',
      '  # the docs are always recorded',
      'docs'
    ].join('\n')
    expect(parseServices(raw)).toEqual([
      { name: 'api', patterns: ['services/api/**', 'libs/common/**'], line: 2 },
      { name: 'web', patterns: ['apps/web/**', '!apps/web/**/*.md'], line: 5 },
      { name: 'docs', patterns: [], line: 7 }
    ])
  })

  it('refuses a risk-paths category named incomplete: that label says a risk was not read whole', () => {
    expect(() => parseServices('incomplete: db/**', Inputs.RiskPaths)).toThrow(
      /risk-paths", line 1, names "incomplete", the label of a risk not read from every path\.$/
    )
    expect(parseServices('incomplete: db/**')?.[0].name).toBe('incomplete')
  })

  it('is undefined when the input has only blank and comment lines', () => {
    expect(parseServices('')).toBeUndefined()
    expect(parseServices('\n  \r\n# nothing yet\n\t\n')).toBeUndefined()
  })

  it('accepts CRLF and bare CR line ends, counting lines the same way', () => {
    const lines = ['api: services/api/**', '', 'web']
    const expected = parseServices(lines.join('\n'))
    expect(expected).toHaveLength(2)
    expect(parseServices(lines.join('\r\n'))).toEqual(expected)
    expect(parseServices(lines.join('\r'))).toEqual(expected)
    expect(problem('api\r\n\r\napi', 3)).toContain('first on line 1')
  })

  it('takes tabs and runs of spaces as separators, and the colon with or without spaces', () => {
    expect(parseServices('api :\tsrc/**   lib/**\t')).toEqual([
      { name: 'api', patterns: ['src/**', 'lib/**'], line: 1 }
    ])
    expect(parseServices('api:src/**')).toEqual([{ name: 'api', patterns: ['src/**'], line: 1 }])
  })

  it('accepts names of letters, digits and . _ - / @', () => {
    const name = '@acme/shop-api_v2.1'
    expect(parseServices(name)).toEqual([{ name, patterns: [], line: 1 }])
  })

  describe('refuses', () => {
    it('a name with spaces, suggesting the colon when the rest looks like patterns', () => {
      const message = problem('docs\napi services/api/**', 2)
      expect(message).toContain('"api services/api/**"')
      expect(message).toContain('api: services/api/**')
      expect(problem('my api: src/**', 1)).toContain('service name with spaces, "my api"')
      const many = Array.from({ length: 40 }, (_, i) => `services/part-${i}/**`).join(' ')
      expect(problem(`api ${many}`, 1).length).toBeLessThan(600)
    })

    it('an empty name', () => {
      expect(problem(': src/**', 1)).toContain('no service name before the colon')
    })

    it('duplicate names, naming both lines', () => {
      const message = problem('api: a/**\nweb\n\napi: b/**', 4)
      expect(message).toContain('"api" again (first on line 1)')
    })

    it('NAME: with nothing after it, saying both ways to fix it', () => {
      const message = problem('web\napi:   ', 2)
      expect(message).toContain('nothing after "api:"')
      expect(message).toContain('Write api alone')
      expect(message).toContain('api: services/api/**')
    })

    it('names with other characters or too long', () => {
      expect(problem('api!', 1)).toContain('letters, digits and . _ - / @')
      expect(problem('api,web', 1)).toContain('"api,web"')
      expect(problem('a'.repeat(101), 1)).toContain('at most 100')
      expect(parseServices('a'.repeat(100))).toHaveLength(1)
    })

    it.each([
      ['/services/api/**', 'is absolute', 'as services/api/**'],
      ['services/../secrets/**', '"." or ".." segment', 'without ./ or ../'],
      ['./services/**', '"." or ".." segment', 'from the repository root'],
      ['services/api/', 'ends with "/"', 'write services/api/** to match everything'],
      ['services//api', 'empty path segment', '"//"'],
      ['services\\api\\**', 'backslash', 'separate folders with "/"'],
      ['!', 'excludes nothing', 'as !docs/**'],
      ['!!docs/**', 'more than one "!"', 'a single "!" excludes'],
      ['#api', 'comments go on a line of their own', '"#api"']
    ])('the pattern %j', (pattern, why, hint) => {
      const message = problem(`docs\napi: src/** ${pattern}`, 2)
      expect(message).toContain(why)
      expect(message).toContain(hint)
    })

    it.each([
      ['services/[ab/**', 'not a valid glob (Missing closing: "]")', 'as [[]'],
      ['services/{api,web/**', 'not a valid glob (Missing closing: "}")', 'in brackets'],
      ['!services/@(api/**', 'not a valid glob (Missing closing: ")")', 'in brackets'],
      ['services/api)/**', 'not a valid glob (Missing opening: "(")', 'in brackets']
    ])('the pattern %j, which glob matching cannot compile', async (pattern, why, hint) => {
      const specs = parseServices(`docs\napi: src/** ${pattern}`) ?? []
      const error = await checkServiceGlobs(specs).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(InputError)
      const { message } = error as InputError
      expect(message).toContain('Input "services", line 2, has the pattern')
      expect(message).toContain(why)
      expect(message).toContain(hint)
      // picomatch's advice to escape with "\" contradicts the backslash rule, so it is dropped.
      expect(message).not.toContain('to match literal characters')
      await expect(
        checkServiceGlobs(parseServices('api: src/** !docs/**') ?? [])
      ).resolves.toBeUndefined()
    })

    it('a service with only "!" patterns, which could never match', () => {
      expect(problem('web: !apps/web/**/*.md', 1)).toContain('web: ** !apps/web/**/*.md')
    })

    it('a control character, quoted escaped', () => {
      const message = problem('api: src/**\u0007', 1)
      expect(message).toContain('\\u0007')
      expect(problem('api: src/\u202e**', 1)).toContain('bidirectional')
    })

    it('more than 100 services, at the first line over', () => {
      const names = Array.from({ length: 100 }, (_, i) => `service-${i}`)
      expect(parseServices(names.join('\n'))).toHaveLength(100)
      const message = problem(['# many', ...names, 'one-more'].join('\n'), 102)
      expect(message).toContain('more than 100 services')
    })

    it('a line over 2,000 characters, without quoting it whole', () => {
      const line = `api: ${'x'.repeat(2000)}`
      const message = problem(line, 1)
      expect(message).toContain(`${line.length} characters long`)
      expect(message.length).toBeLessThan(200)
    })

    it('more than 50 patterns for one service', () => {
      const patterns = Array.from({ length: 51 }, (_, i) => `p${i}/**`)
      expect(problem(`api: ${patterns.join(' ')}`, 1)).toContain('51 patterns')
      expect(parseServices(`api: ${patterns.slice(1).join(' ')}`)?.[0].patterns).toHaveLength(50)
    })
  })

  it('round-trips any well-formed list, whatever the line ends, blanks and comments', () => {
    const nameChar = fc.constantFrom(...'abcXYZ019._-/@'.split(''))
    const name = fc.string({ unit: nameChar, minLength: 1, maxLength: 12 })
    const segment = fc.oneof(
      fc.constantFrom('*', '**', '*.ts', '.github', '{a,b}', '[0-9]', 'README.md', '@(x|y)'),
      fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/)
    )
    const glob = fc.array(segment, { minLength: 1, maxLength: 4 }).map(s => s.join('/'))
    const patterns = fc.oneof(
      fc.constant([] as string[]),
      fc
        .tuple(glob, fc.array(fc.tuple(fc.boolean(), glob), { maxLength: 4 }))
        .map(([first, rest]) => [first, ...rest.map(([not, g]) => (not ? `!${g}` : g))])
    )
    const filler = fc.constantFrom('', '  ', '\t', '# a comment', '  #: not: a service')
    const entry = fc.record({
      patterns,
      before: fc.array(filler, { maxLength: 2 }),
      spacing: fc.constantFrom(' ', '  ', '\t', ' \t ')
    })
    const list = fc.uniqueArray(fc.tuple(name, entry), {
      minLength: 1,
      maxLength: 8,
      selector: ([n]) => n
    })
    fc.assert(
      fc.property(list, fc.constantFrom('\n', '\r\n', '\r'), (entries, eol) => {
        const lines: string[] = []
        const expected: ServiceSpec[] = []
        for (const [serviceName, { patterns: globs, before, spacing }] of entries) {
          lines.push(...before)
          lines.push(
            globs.length === 0 ? serviceName : `${serviceName}:${spacing}${globs.join(spacing)}`
          )
          expected.push({ name: serviceName, patterns: globs, line: lines.length })
        }
        expect(parseServices(lines.join(eol))).toEqual(expected)
      }),
      { numRuns: 150 }
    )
  })
})
