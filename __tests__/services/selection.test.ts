import { describe, expect, it, jest } from '@jest/globals'
import type { ChangedPath } from '../../src/services/selection.ts'
import type { ServiceSpec } from '../../src/settings.ts'

// Wraps picomatch to count compilations and matches; matching itself is the real library's.
const realPicomatch = (await import('picomatch')).default
let matchesTried = 0
const compile = jest.fn((...args: Parameters<typeof realPicomatch>) => {
  const matcher = realPicomatch(...args)
  return (path: string) => {
    matchesTried++
    return matcher(path)
  }
})
jest.unstable_mockModule('picomatch', () => ({ default: compile }))
const { MAX_MATCHED_PATHS, selectServices } = await import('../../src/services/selection.ts')

function spec(name: string, patterns: string[], line = 1): ServiceSpec {
  return { name, patterns, line }
}

/** Changed files that were edited in place, none renamed. */
function edited(...paths: string[]): ChangedPath[] {
  return paths.map(path => ({ path }))
}

/** The decision for one service against a complete list of changed files. */
function decide(patterns: string[], paths: string[]) {
  return selectServices([spec('svc', patterns)], { files: edited(...paths), complete: true })
    .decisions[0]
}

const SHOP = [
  spec('api', ['services/api/**', 'libs/common/**'], 1),
  spec('web', ['apps/web/**', '!apps/web/**/*.md'], 2),
  spec('docs', [], 3)
]

describe('selectServices', () => {
  it('records the services whose patterns a changed file matches, and always those without patterns', () => {
    const selection = selectServices(SHOP, {
      files: edited('services/api/src/server.ts', 'apps/web/README.md', 'libs/common/log.ts'),
      complete: true
    })
    expect(selection.allRecordedBecause).toBeUndefined()
    expect(selection.decisions).toEqual([
      {
        name: 'api',
        recorded: true,
        reason: 'selected: 2 changed files match',
        matchedPaths: ['services/api/src/server.ts', 'libs/common/log.ts'],
        matchedCount: 2
      },
      {
        name: 'web',
        recorded: false,
        reason: 'skipped: no changed file matches its patterns',
        matchedPaths: [],
        matchedCount: 0
      },
      {
        name: 'docs',
        recorded: true,
        reason: 'always selected: no patterns',
        matchedPaths: [],
        matchedCount: 0
      }
    ])
  })

  it('says "1 changed file matches" in the singular', () => {
    expect(decide(['src/**'], ['src/a.ts', 'README.md']).reason).toBe(
      'selected: 1 changed file matches'
    )
  })

  describe('matching', () => {
    it('excludes a file that a "!" pattern matches, even when a positive pattern matches it', () => {
      const web = ['apps/web/**', '!apps/web/**/*.md', '!apps/web/fixtures/**']
      expect(decide(web, ['apps/web/README.md', 'apps/web/docs/deep/guide.md']).recorded).toBe(
        false
      )
      expect(decide(web, ['apps/web/fixtures/data.json']).recorded).toBe(false)
      expect(decide(web, ['apps/web/README.md', 'apps/web/src/app.tsx']).matchedPaths).toEqual([
        'apps/web/src/app.tsx'
      ])
    })

    it('matches dotfiles and dot folders with * and **', () => {
      expect(decide(['**'], ['.github/workflows/deploy.yml']).recorded).toBe(true)
      expect(decide(['services/api/*'], ['services/api/.env']).recorded).toBe(true)
      expect(decide(['**/.env'], ['.env', 'a/b/.env']).matchedCount).toBe(2)
      expect(decide(['src/**', '!**/.*'], ['src/.eslintrc']).recorded).toBe(false)
    })

    it('lets ** cross any number of folders, and * stay within one', () => {
      const deep = 'services/api/src/handlers/v2/orders/create.test.ts'
      expect(decide(['services/api/**'], [deep]).recorded).toBe(true)
      expect(decide(['services/**/*.ts'], [deep]).recorded).toBe(true)
      expect(decide(['services/*/src/*'], [deep]).recorded).toBe(false)
      expect(decide(['**/orders/**'], [deep]).recorded).toBe(true)
      expect(decide(['*.ts'], ['src/index.ts']).recorded).toBe(false)
      expect(decide(['**/*.ts'], ['index.ts']).recorded).toBe(true)
    })

    it('matches whole paths, case-sensitively, with braces and classes', () => {
      expect(decide(['services/api/**'], ['services/api-gateway/main.go']).recorded).toBe(false)
      expect(decide(['services/api/**'], ['Services/API/main.go']).recorded).toBe(false)
      expect(decide(['{apps,libs}/web/**'], ['libs/web/a.ts']).recorded).toBe(true)
      expect(decide(['v[0-9]/**'], ['v2/a', 'vx/a']).matchedPaths).toEqual(['v2/a'])
    })

    it('matches a path holding a line break, line separator or control character as its characters would', () => {
      // Anyone who can land a file chooses its name, and Git allows each of these in one.
      for (const c of ['\n', '\r', '\u2028', '\u2029', '\u0001']) {
        const found = {
          '**': decide(['services/api/**'], [`services/api/${c}main.go`]).matchedPaths,
          '** then *': decide(['**/k8s/**', '**/*.tf'], [`k8s/dep${c}loy.yaml`, `infra/${c}.tf`])
            .matchedCount,
          '*': decide(['a/*/b'], [`a/${c}/b`, `a/x${c}/b`, `a/x/${c}/b`]).matchedCount,
          '?': decide(['a?b'], [`a${c}b`]).recorded,
          whole: decide(['services/api/**'], [`services/api${c}/main.go`]).recorded,
          excluded: decide(['src/**', '!**/*.md'], [`src/${c}.md`]).recorded
        }
        expect([c, found]).toEqual([
          c,
          {
            '**': [`services/api/${c}main.go`],
            '** then *': 2,
            '*': 2,
            '?': true,
            whole: false,
            excluded: false
          }
        ])
      }
    })

    it('uses "/" as the only separator, even on a Windows runner', () => {
      // picomatch reads the platform from navigator.platform, then process.platform.
      const saved = Object.getOwnPropertyDescriptor(globalThis, 'navigator')
      Object.defineProperty(globalThis, 'navigator', {
        value: { platform: 'Win32' },
        configurable: true
      })
      try {
        expect(decide(['services/api/**'], ['services\\api\\main.go']).recorded).toBe(false)
        expect(decide(['services/api/**'], ['services/api/main.go']).recorded).toBe(true)
      } finally {
        if (saved) Object.defineProperty(globalThis, 'navigator', saved)
        else delete (globalThis as { navigator?: unknown }).navigator
      }
    })
  })

  it(`keeps the first ${MAX_MATCHED_PATHS} matched paths, in the order given, and counts them all`, () => {
    const files = Array.from({ length: MAX_MATCHED_PATHS + 7 }, (_, i) => `src/f${i}.ts`)
    const decision = decide(['src/**'], ['README.md', ...files])
    expect(decision.matchedCount).toBe(files.length)
    expect(decision.matchedPaths).toEqual(files.slice(0, MAX_MATCHED_PATHS))
  })

  describe('renamed files', () => {
    it('count once when both names match, listed under the new name', () => {
      const decision = selectServices([spec('api', ['services/api/**'])], {
        files: [{ path: 'services/api/b.ts', previousPath: 'services/api/a.ts' }],
        complete: true
      }).decisions[0]
      expect(decision.matchedCount).toBe(1)
      expect(decision.matchedPaths).toEqual(['services/api/b.ts'])
      expect(decision.reason).toBe('selected: 1 changed file matches')
    })

    it('touch the service that owned the file before, and the one that owns it after', () => {
      const moved = { path: 'libs/common/retry.ts', previousPath: 'services/api/retry.ts' }
      const selection = selectServices(SHOP, { files: [moved], complete: true })
      expect(selection.decisions[0]).toMatchObject({
        recorded: true,
        matchedCount: 1,
        matchedPaths: ['libs/common/retry.ts']
      })
      const out = selectServices([spec('api', ['services/api/**'])], {
        files: [{ path: 'services/billing/retry.ts', previousPath: 'services/api/retry.ts' }],
        complete: true
      })
      expect(out.decisions[0].matchedPaths).toEqual(['services/billing/retry.ts'])
    })

    it('leave a service alone when neither name matches its patterns', () => {
      const renamed = { path: 'apps/web/guide.md', previousPath: 'apps/web/README.md' }
      expect(selectServices(SHOP, { files: [renamed], complete: true }).decisions[1]).toMatchObject(
        { recorded: false, matchedCount: 0 }
      )
    })
  })

  describe('time bound', () => {
    // picomatch compiles each * to a lazy [^/]*?: against a path it fails to match, this
    // pattern backtracks for minutes.
    const SLOW_PATTERN = '**/*a*a*a*a*a*a*a*b'
    /** Changed paths of 65 characters that the slow pattern fails to match. */
    const SLOW_PATHS = edited(...Array.from({ length: 5 }, () => `${'a'.repeat(64)}/`))
    /** Ample for quick matching on a busy machine, far below the minutes a slow match takes. */
    const SMALL_BUDGET_MS = 100

    it('records every service, and says why, when matching takes longer than the budget', () => {
      const specs = [spec('api', [SLOW_PATTERN], 1), spec('docs', [], 2)]
      matchesTried = 0
      const selection = selectServices(
        specs,
        { files: SLOW_PATHS, complete: true },
        SMALL_BUDGET_MS
      )
      // Matching was abandoned on the first path: the other four were never tried.
      expect(matchesTried).toBe(1)
      expect(selection.decisions).toEqual([
        {
          name: 'api',
          recorded: true,
          reason: 'selected: matching the changed files took too long',
          matchedPaths: [],
          matchedCount: 0
        },
        {
          name: 'docs',
          recorded: true,
          reason: 'always selected: no patterns',
          matchedPaths: [],
          matchedCount: 0
        }
      ])
      expect(selection.allRecordedBecause).toMatch(
        /^Every service is selected: matching the services' patterns against the changed files took longer than 0\.1 s\. Simplify the patterns/
      )
    })

    it('bounds the whole selection, not each service', () => {
      const specs = Array.from({ length: 100 }, (_, i) => spec(`svc-${i}`, [SLOW_PATTERN], i + 1))
      const files = edited(...Array.from({ length: 299 }, () => `${'a'.repeat(64)}/`))
      matchesTried = 0
      const selection = selectServices(specs, { files, complete: true }, SMALL_BUDGET_MS)
      // A bound per service would have let each of the 100 services try a path.
      expect(matchesTried).toBe(1)
      expect(selection.decisions.every(decision => decision.recorded)).toBe(true)
      expect(selection.allRecordedBecause).toContain('took longer than 0.1 s')
    })

    it('matches as usual when the slow pattern is given paths it matches quickly', () => {
      const decision = selectServices(
        [spec('api', [SLOW_PATTERN])],
        { files: edited('src/aaaaaaab', 'src/aaaaaaa.ts'), complete: true },
        SMALL_BUDGET_MS
      ).decisions[0]
      expect(decision).toMatchObject({ recorded: true, matchedPaths: ['src/aaaaaaab'] })
    })
  })

  it('skips every service with patterns when no file changed', () => {
    const selection = selectServices(SHOP, { files: [], complete: true })
    expect(selection.decisions.map(d => d.recorded)).toEqual([false, false, true])
    expect(selection.allRecordedBecause).toBeUndefined()
  })

  it('records every service when the changed files are unknown, and says why', () => {
    const selection = selectServices(SHOP, {
      complete: false,
      reason: 'no previous deploy was found'
    })
    expect(selection.decisions.every(d => d.recorded)).toBe(true)
    expect(selection.decisions[0].reason).toBe('selected: the changed files are unknown')
    expect(selection.decisions[2].reason).toBe('always selected: no patterns')
    expect(selection.allRecordedBecause).toBe(
      'Every service is selected: the files changed since the previous deploy are unknown (no previous deploy was found).'
    )
    // "complete" cannot make an absent list known.
    expect(selectServices(SHOP, { complete: true }).allRecordedBecause).toBe(
      'Every service is selected: the files changed since the previous deploy are unknown.'
    )
  })

  it('records every service when the list is incomplete, keeping what the known files matched', () => {
    const selection = selectServices(SHOP, {
      files: edited('libs/common/log.ts'),
      complete: false,
      reason: "GitHub's compare lists at most 300 files"
    })
    expect(selection.decisions.map(d => [d.recorded, d.matchedCount])).toEqual([
      [true, 1],
      [true, 0],
      [true, 0]
    ])
    expect(selection.decisions[1].reason).toBe(
      'selected: the changed files are incomplete (0 changed files match so far)'
    )
    expect(selection.allRecordedBecause).toBe(
      "Every service is selected: the list of files changed since the previous deploy is incomplete (GitHub's compare lists at most 300 files); 1 file known."
    )
  })

  it('compiles each service matcher once, whatever the number of files', () => {
    const services = Array.from({ length: 50 }, (_, i) =>
      spec(`svc-${i}`, [`services/svc-${i}/**`, `!services/svc-${i}/**/*.md`], i + 1)
    )
    const files = Array.from({ length: 300 }, (_, i) => ({
      path: `services/svc-${i % 60}/src/module-${i}/index.ts`
    }))
    compile.mockClear()
    const selection = selectServices(services, { files, complete: true })
    // One include and one exclude matcher per service.
    expect(compile).toHaveBeenCalledTimes(100)
    expect(selection.decisions.filter(d => d.recorded)).toHaveLength(50)
    expect(selection.decisions[0].matchedCount).toBe(5)
  })
})
