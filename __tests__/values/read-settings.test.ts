import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { Inputs, SETTING_DEFAULTS } from '../../src/settings.ts'
import type { InputName } from '../../src/settings.ts'
import { InputError } from '../../src/errors.ts'
import { inputError } from '../support/input-error.ts'
import { character, COMMAND_NAMES, hostileText, NUM_RUNS } from '../support/hostile-text.ts'
import { readReportingSettings, readSettings } from '../../src/values/read-settings.ts'
import type { ChangeFields, GetInput, Settings } from '../../src/settings.ts'
import { actionDefaults } from '../../scripts/run-bundled-action.ts'

const NOW_MS = Date.UTC(2025, 10, 21, 12, 0, 0)
const NOW_S = NOW_MS / 1000
const API_KEY = 'ctk_live_7f3a9c2e51b84d06a1e9f0c3b2d7e8a4'
const BASE_URL = 'https://change-tracking.test/'

/** The inputs as the runner gives them: action.yml's defaults, then what the step gives. */
function getInputFrom(given: Partial<Record<InputName, string>>): GetInput {
  const all: Partial<Record<string, string>> = {
    ...actionDefaults(),
    [Inputs.ApiKey]: API_KEY,
    [Inputs.BaseUrl]: BASE_URL,
    ...given
  }
  return name => all[name] ?? ''
}

function read(given: Partial<Record<InputName, string>> = {}): Settings {
  return readSettings(getInputFrom(given), { now: NOW_MS })
}

/** The ChangeFields key of a text input: "custom-metadata" → "customMetadata". */
function changeField(name: InputName): keyof ChangeFields {
  return name.replace(/-(.)/g, (_, letter: string) => letter.toUpperCase()) as keyof ChangeFields
}

describe('readSettings', () => {
  it("reads action.yml's defaults when only api-key and base-url are given", () => {
    expect(read()).toEqual({
      apiKey: API_KEY,
      baseUrl: new URL(BASE_URL),
      command: 'change',
      change: {},
      githubMetadata: true,
      otelAttributes: true,
      failOnError: 'auto',
      dryRun: false,
      timeoutSeconds: 30,
      maxAttempts: 4,
      jobSummary: true,
      githubToken: '',
      includeCommits: true,
      commitsFrom: 'api',
      recordAt: 'now',
      jobStatus: { outcome: 'unknown', status: '' },
      triage: { autoLabels: true, issueKeys: 'auto' }
    })
  })

  it("keeps the literal defaults of action.yml, which the command line's flags take too", () => {
    // The defaults that are expressions (github-token, job-status) read empty here.
    const literal = Object.entries(actionDefaults()).filter(([, value]) => value !== '')
    expect(Object.fromEntries(literal)).toEqual(SETTING_DEFAULTS)
  })

  it.each(Object.keys(SETTING_DEFAULTS))(
    'reads %s given empty as its default, as when it is not given',
    name => {
      const notGiven = readSettings(name => getInputFrom({})(name), { now: NOW_MS })
      const empty = readSettings(
        inputName => (inputName === name ? '' : getInputFrom({})(inputName)),
        { now: NOW_MS }
      )
      expect(empty).toEqual(notGiven)
      const reporting = readReportingSettings(inputName =>
        inputName === name ? '' : getInputFrom({})(inputName)
      )
      expect(reporting.error).toBeUndefined()
    }
  )

  it('reads every such input given empty at once as when none is given, the reporting settings included', () => {
    // As a reusable workflow passes each input its caller left out.
    const emptied = Object.fromEntries(Object.keys(SETTING_DEFAULTS).map(name => [name, '']))
    const notGiven = getInputFrom({})
    const empty = getInputFrom(emptied)
    expect(readSettings(empty, { now: NOW_MS })).toEqual(readSettings(notGiven, { now: NOW_MS }))
    expect(readReportingSettings(empty)).toEqual(readReportingSettings(notGiven))
    expect(readReportingSettings(empty).error).toBeUndefined()
  })

  it('reads every input into its typed field', () => {
    const settings = read({
      [Inputs.BaseUrl]: 'https://change-tracking.test/api',
      [Inputs.Command]: 'change',
      [Inputs.Description]: 'Deploy abc1234\nwith notes',
      [Inputs.Environment]: 'production',
      [Inputs.Service]: 'owner/repo',
      [Inputs.Version]: 'abc1234',
      [Inputs.User]: 'octocat',
      [Inputs.Comment]: 'Rolled out\tgradually',
      [Inputs.Team]: 'platform',
      [Inputs.Labels]: 'deploy, backend\nurgent',
      [Inputs.CustomMetadata]: '{"ticket": "OPS-42"}',
      [Inputs.CreatedAt]: '2025-11-21T10:00:00Z',
      [Inputs.GithubMetadata]: 'false',
      [Inputs.HeartbeatId]: 'hb-123',
      [Inputs.FailOnError]: 'true',
      [Inputs.DryRun]: 'true',
      [Inputs.TimeoutSeconds]: '120',
      [Inputs.MaxAttempts]: '2',
      [Inputs.JobSummary]: 'false',
      [Inputs.EventIds]: 'e1,e2',
      [Inputs.ChangeId]: 'chg-9',
      [Inputs.GithubToken]: 'ghs_token123',
      [Inputs.IncludeCommits]: 'false',
      [Inputs.PreviousVersion]: 'v1.2.3',
      [Inputs.RecordAt]: 'job-end',
      [Inputs.JobStatus]: 'cancelled',
      [Inputs.AutoLabels]: 'false',
      [Inputs.RiskPaths]: 'payments: services/pay/**',
      [Inputs.IssueKeys]: 'ENG, ops',
      [Inputs.Remediates]: 'chg_41',
      [Inputs.OtelAttributes]: 'false',
      [Inputs.Artifact]: 'nginx:1.27'
    })
    expect(settings).toEqual({
      apiKey: API_KEY,
      baseUrl: new URL('https://change-tracking.test/api/'),
      command: 'change',
      change: {
        description: 'Deploy abc1234\nwith notes',
        environment: 'production',
        service: 'owner/repo',
        version: 'abc1234',
        user: 'octocat',
        comment: 'Rolled out\tgradually',
        team: 'platform',
        labels: ['deploy', 'backend', 'urgent'],
        customMetadata: { ticket: 'OPS-42' },
        createdAt: Date.UTC(2025, 10, 21, 10) / 1000,
        artifact: {
          reference: 'docker.io/library/nginx:1.27',
          image: { name: 'docker.io/library/nginx', tag: '1.27' }
        }
      },
      githubMetadata: false,
      otelAttributes: false,
      heartbeatId: 'hb-123',
      failOnError: 'true',
      dryRun: true,
      timeoutSeconds: 120,
      maxAttempts: 2,
      jobSummary: false,
      eventIds: ['e1', 'e2'],
      changeId: 'chg-9',
      githubToken: 'ghs_token123',
      includeCommits: false,
      commitsFrom: 'api',
      previousVersion: 'v1.2.3',
      recordAt: 'job-end',
      jobStatus: { outcome: 'cancelled', status: 'cancelled' },
      triage: {
        autoLabels: false,
        riskPaths: [{ name: 'payments', patterns: ['services/pay/**'], line: 1 }],
        issueKeys: { prefixes: ['ENG', 'OPS'] },
        remediates: 'chg_41'
      }
    })
  })

  it('refuses issue-keys that are not auto, none or project prefixes, and a long remediates', () => {
    expect(() => read({ [Inputs.IssueKeys]: 'ENG-1' })).toThrow(
      'Input "issue-keys" must be auto, none, or project prefixes'
    )
    expect(() => read({ [Inputs.Remediates]: 'v'.repeat(256) })).toThrow(
      'Input "remediates" must be at most 255 characters'
    )
  })

  it('reads risk-paths in the services grammar, naming risk-paths in its errors', () => {
    expect(() => read({ [Inputs.RiskPaths]: 'db: /migrations/**' })).toThrow(
      'Input "risk-paths", line 1, has the pattern "/migrations/**", which is absolute'
    )
  })

  it('refuses a record-at other than now or job-end, and job-end with a command that records nothing', () => {
    expect(() => read({ [Inputs.RecordAt]: 'later' })).toThrow(
      'Input "record-at" must be one of now, job-end; got "later".'
    )
    expect(() =>
      read({ [Inputs.RecordAt]: 'job-end', [Inputs.Command]: 'get-change', [Inputs.ChangeId]: 'c' })
    ).toThrow(/Input "record-at" may be "job-end" only when command is "change" or "heartbeat"/)
  })

  it('keeps the events input raw and the events-file path as given', () => {
    const ndjson = '{"name":"a","data":{}}\n{"name":"b","data":[1]}'
    expect(read({ [Inputs.Command]: 'events', [Inputs.Events]: ndjson }).events).toBe(ndjson)
    expect(
      read({ [Inputs.Command]: 'events', [Inputs.EventsFile]: 'events/deploy.ndjson' }).eventsFile
    ).toBe('events/deploy.ndjson')
  })

  it('bounds created-at by the clock when no time is given', () => {
    const inAnHour = String(Math.floor(Date.now() / 1000) + 3600)
    const settings = readSettings(getInputFrom({ [Inputs.CreatedAt]: inAnHour }))
    expect(settings.change.createdAt).toBe(Number(inAnHour))
    const inTwoDays = String(Math.floor(Date.now() / 1000) + 2 * 86_400)
    expect(() => readSettings(getInputFrom({ [Inputs.CreatedAt]: inTwoDays }))).toThrow(InputError)
  })

  describe('api-key', () => {
    it('is required', () => {
      const error = inputError(() => read({ [Inputs.ApiKey]: '' }))
      expect(error.input).toBe(Inputs.ApiKey)
      expect(error.message).toMatch(/^Input "api-key" is required/)
    })

    it.each([
      ['a space', 'ctk live'],
      ['a line break', 'ctk\nlive'],
      ['a non-ASCII character', 'ctk_lïve']
    ])('refuses a key with %s, which an HTTP header cannot carry, without quoting it', (_, key) => {
      const error = inputError(() => read({ [Inputs.ApiKey]: key }))
      expect(error.input).toBe(Inputs.ApiKey)
      expect(error.message).toContain('visible ASCII')
      expect(error.message).not.toContain(key)
    })
  })

  describe('never echoes the api-key', () => {
    const otherInputs = Object.values(Inputs).filter(name => name !== Inputs.ApiKey)

    it.each(otherInputs)('refuses %s when it contains the key, naming it and the key', name => {
      const error = inputError(() => read({ [name]: `x ${API_KEY} y` }))
      expect(error.input).toBe(name)
      expect(error.message).toContain(`Input "${name}"`)
      expect(error.message).toContain("contains the API key's value")
      expect(error.message).not.toContain(API_KEY.slice(0, 12))
    })

    it.each([
      ['in the host', `https://${API_KEY}.change-tracking.test/`],
      ['in the path', `https://change-tracking.test/${API_KEY}/`],
      ['as the password', `https://user:${API_KEY}@change-tracking.test/`],
      ['in the query', `https://change-tracking.test/?key=${API_KEY}`]
    ])('refuses a base-url with the key %s', (_, url) => {
      const error = inputError(() => read({ [Inputs.BaseUrl]: url }))
      expect(error.input).toBe(Inputs.BaseUrl)
      expect(error.message).not.toContain(API_KEY.slice(0, 12))
    })

    it('refuses a base-url with the URL-encoded key', () => {
      const key = 'k/e+y!1'
      const error = inputError(() =>
        read({
          [Inputs.ApiKey]: key,
          [Inputs.BaseUrl]: `https://change-tracking.test/${encodeURIComponent(key)}/`
        })
      )
      expect(error.message).toContain(
        "contains the API key's value: give the key only as the API key"
      )
      expect(error.message).not.toContain(encodeURIComponent(key))
    })

    it('refuses an invalid boolean that equals the key without quoting it', () => {
      const error = inputError(() => read({ [Inputs.DryRun]: API_KEY }))
      expect(error.input).toBe(Inputs.DryRun)
      expect(error.message).not.toContain(API_KEY.slice(0, 12))
    })

    it('never quotes a long key in part, even past the quoting limit', () => {
      const longKey = `ctk_${'a1b2c3d4'.repeat(10)}`
      const error = inputError(() =>
        read({ [Inputs.ApiKey]: longKey, [Inputs.TimeoutSeconds]: longKey })
      )
      expect(error.message).not.toContain(longKey.slice(0, 20))
    })
  })

  describe('command requirements', () => {
    it('requires heartbeat-id for command heartbeat', () => {
      const error = inputError(() => read({ [Inputs.Command]: 'heartbeat' }))
      expect(error.input).toBe(Inputs.HeartbeatId)
      expect(error.message).toMatch(
        /^Input "heartbeat-id" is required when command is "heartbeat": /
      )
      expect(read({ [Inputs.Command]: 'heartbeat', [Inputs.HeartbeatId]: 'hb' }).heartbeatId).toBe(
        'hb'
      )
    })

    it('requires change-id for command get-change', () => {
      const error = inputError(() => read({ [Inputs.Command]: 'get-change' }))
      expect(error.input).toBe(Inputs.ChangeId)
      expect(error.message).toMatch(/^Input "change-id" is required when command is "get-change"/)
    })

    it('requires event-ids for command event-results, also when they are all blank', () => {
      for (const eventIds of ['', ' , ,', '[]']) {
        const error = inputError(() =>
          read({ [Inputs.Command]: 'event-results', [Inputs.EventIds]: eventIds })
        )
        expect(error.input).toBe(Inputs.EventIds)
        expect(error.message).toMatch(/^Input "event-ids" is required when command is/)
      }
    })

    it('requires one of events and events-file for command events', () => {
      const error = inputError(() => read({ [Inputs.Command]: 'events' }))
      expect(error.input).toBe(Inputs.Events)
      expect(error.message).toContain('"events-file"')
    })

    it('refuses both events and events-file for command events', () => {
      const error = inputError(() =>
        read({
          [Inputs.Command]: 'events',
          [Inputs.Events]: '{"name":"a","data":{}}',
          [Inputs.EventsFile]: 'events.json'
        })
      )
      expect(error.message).toBe(
        'Input "events" is given with "events-file": when command is "events", give exactly one of them.'
      )
    })

    it('needs nothing more for change and hello', () => {
      expect(read({ [Inputs.Command]: 'change' }).command).toBe('change')
      expect(read({ [Inputs.Command]: 'hello' }).command).toBe('hello')
    })

    it('does not require command inputs for other commands', () => {
      expect(
        read({ [Inputs.Command]: 'hello', [Inputs.Events]: 'x', [Inputs.EventsFile]: 'y' }).command
      ).toBe('hello')
    })
  })

  describe('text fields', () => {
    const singleLine = [
      Inputs.Environment,
      Inputs.Service,
      Inputs.Version,
      Inputs.User,
      Inputs.Team
    ]
    const multiLine = [Inputs.Description, Inputs.Comment]

    it.each([...singleLine, ...multiLine])('leaves %s undefined when empty or blank', name => {
      expect(read({ [name]: '' }).change[changeField(name)]).toBeUndefined()
      expect(read({ [name]: '   ' }).change[changeField(name)]).toBeUndefined()
      expect(read({ [name]: 'x' }).change[changeField(name)]).toBe('x')
    })

    it('passes a 20 KB unicode description through unchanged', () => {
      const unit = 'Déploiement 🚀 ✓ 東京 — e\u0301 👩‍👩‍👧 '
      const description = unit.repeat(Math.ceil(20_000 / unit.length)).trim()
      const settings = read({ [Inputs.Description]: description })
      expect(settings.change.description).toBe(description)
    })

    it.each(multiLine)('accepts tab and line breaks in %s', name => {
      expect(read({ [name]: 'a\tb\r\nc\nd' }).change[changeField(name)]).toBe('a\tb\r\nc\nd')
    })

    it.each(multiLine)('refuses NUL and other control characters in %s', name => {
      for (const text of ['a\u0000b', 'a\u001bb', 'a\u007fb']) {
        const error = inputError(() => read({ [name]: text }))
        expect(error.input).toBe(name)
        expect(error.message).toContain(`Input "${name}" must not contain control characters`)
      }
      expect(inputError(() => read({ [name]: 'ab\u0000' })).message).toContain(
        'U+0000 at character 3'
      )
    })

    it.each(singleLine)('refuses line separators and bidirectional overrides in %s', name => {
      for (const text of ['a\u2028b', 'a\u202eb', 'a\u2066b']) {
        const error = inputError(() => read({ [name]: text }))
        expect(error.message).toContain(
          `Input "${name}" must not contain control, line-separating or bidirectional characters`
        )
      }
    })

    it.each(singleLine)('refuses line breaks and tabs in %s', name => {
      for (const text of ['a\nb', 'a\tb', 'a\u0000b']) {
        expect(inputError(() => read({ [name]: text })).input).toBe(name)
      }
    })

    it.each([Inputs.HeartbeatId, Inputs.ChangeId])(
      'trims %s and refuses control characters',
      name => {
        const field = name === Inputs.HeartbeatId ? 'heartbeatId' : 'changeId'
        expect(read({ [name]: ' id-1 ' })[field]).toBe('id-1')
        expect(read({ [name]: '' })[field]).toBeUndefined()
        for (const id of ['a\tb', 'a\u007fb', 'a\u0085b', 'a\nb']) {
          expect(inputError(() => read({ [name]: id })).input).toBe(name)
        }
      }
    )

    it.each([Inputs.HeartbeatId, Inputs.ChangeId])(
      'refuses %s "." and "..", which would resolve to another path',
      name => {
        expect(inputError(() => read({ [name]: '..' })).message).toBe(
          `Input "${name}" must be an id, not "..".`
        )
        expect(inputError(() => read({ [name]: '.' })).input).toBe(name)
      }
    )

    it('refuses control characters in events-file', () => {
      expect(inputError(() => read({ [Inputs.EventsFile]: 'a\u0000.json' })).input).toBe(
        Inputs.EventsFile
      )
    })
  })
})

describe('the reporting settings: command, fail-on-error, job-summary and record-at', () => {
  it('are read on their own, so that an invalid other input is reported under them', () => {
    const get = getInputFrom({
      [Inputs.Command]: 'heartbeat',
      [Inputs.FailOnError]: 'false',
      [Inputs.JobSummary]: 'False',
      [Inputs.RecordAt]: 'job-end',
      [Inputs.TimeoutSeconds]: 'soon'
    })
    expect(readReportingSettings(get)).toEqual({
      command: 'heartbeat',
      failOnError: 'false',
      jobSummary: false,
      recordAt: 'job-end'
    })
  })

  it('read as their defaults when invalid, keeping the first error for readSettings to throw', () => {
    const get = getInputFrom({
      [Inputs.Command]: 'nonsense',
      [Inputs.FailOnError]: 'sometimes',
      [Inputs.JobSummary]: ''
    })
    const reporting = readReportingSettings(get)
    expect(reporting).toMatchObject({ command: 'change', failOnError: 'auto', jobSummary: true })
    expect(reporting.error?.message).toBe(
      'Input "command" must be one of change, heartbeat, events, event-results, get-change, hello; got "nonsense".'
    )
    expect(() => readSettings(get, { reporting })).toThrow(reporting.error)
  })

  it('read fail-on-error as auto when it is invalid, naming it', () => {
    const get = getInputFrom({ [Inputs.FailOnError]: 'sometimes' })
    const reporting = readReportingSettings(get)
    expect(reporting.failOnError).toBe('auto')
    expect(reporting.error?.message).toBe(
      'Input "fail-on-error" must be auto, true or false; got "sometimes".'
    )
  })

  it('are not parsed again when readSettings is given them', () => {
    const get = getInputFrom({ [Inputs.FailOnError]: 'true', [Inputs.Command]: 'hello' })
    const reporting = {
      command: 'change',
      failOnError: 'false',
      jobSummary: false,
      recordAt: 'job-end'
    } as const
    const settings = readSettings(get, { reporting })
    expect(settings).toMatchObject(reporting)
  })
})

describe('numbers through readSettings', () => {
  it('reads max-attempts from 1 to 10, and timeout-seconds from 1 to 300', () => {
    expect(read({ [Inputs.MaxAttempts]: '10' }).maxAttempts).toBe(10)
    expect(inputError(() => read({ [Inputs.MaxAttempts]: '11' })).message).toBe(
      'Input "max-attempts" must be a whole number from 1 to 10; got "11".'
    )
    expect(inputError(() => read({ [Inputs.TimeoutSeconds]: 'abc' })).message).toBe(
      'Input "timeout-seconds" must be a whole number from 1 to 300; got "abc".'
    )
  })
})

describe('services', () => {
  it('reads one service per line', () => {
    const settings = read({ [Inputs.Services]: 'api: services/api/**\n# comment\n\ndocs' })
    expect(settings.services?.map(spec => spec.name)).toEqual(['api', 'docs'])
  })

  it('refuses service and services together, before anything is sent', () => {
    const error = inputError(() =>
      read({ [Inputs.Service]: 'api', [Inputs.Services]: 'api: services/api/**' })
    )
    expect(error.input).toBe(Inputs.Services)
    expect(error.message).toContain('is given with "service"')
  })
})

/** A day ahead of NOW_MS: created-at may lie at most one day in the future. */
const LATEST_CREATED_AT = NOW_S + 86_400

/** Inputs that make every command's requirements hold, so a failure can only come from the input under test. */
const VALID_INPUTS: Partial<Record<InputName, string>> = {
  [Inputs.HeartbeatId]: 'hb-1',
  [Inputs.ChangeId]: 'chg-1',
  [Inputs.EventIds]: 'e1,e2',
  [Inputs.Events]: '{"name":"deploy","data":{}}'
}

/**
 * The rules a Settings breaks of those every one must keep, whatever the inputs were: checked as
 * one assertion, since a property runs it thousands of times and each expect() costs a stack.
 */
function brokenRules(settings: Settings): string[] {
  const { baseUrl, change, timeoutSeconds, maxAttempts } = settings
  const createdAt = change.createdAt ?? 0
  const rules: Record<string, boolean> = {
    'a key': settings.apiKey !== '',
    'an https base URL': baseUrl.protocol === 'https:',
    'a base URL path ending in /': baseUrl.pathname.endsWith('/'),
    'no query or fragment in the base URL': !/[?#]/.test(baseUrl.href),
    'a known command': COMMAND_NAMES.includes(settings.command),
    'a known fail-on-error': ['auto', 'true', 'false'].includes(settings.failOnError),
    'timeout-seconds from 1 to 300': timeoutSeconds >= 1 && timeoutSeconds <= 300,
    'max-attempts from 1 to 10': maxAttempts >= 1 && maxAttempts <= 10,
    'created-at a whole second, at most a day ahead':
      Number.isInteger(createdAt) && createdAt >= 0 && createdAt <= LATEST_CREATED_AT
  }
  return Object.keys(rules).filter(rule => !rules[rule])
}

/** What keeps a message from a log line: too long, a raw control character, the key. */
function unprintable(message: string, apiKey: string): string[] {
  const problems: Record<string, boolean> = {
    'over 1,000 characters': message.length >= 1000,
    'a control character': /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(message),
    'the key': apiKey.length >= 8 && message.includes(apiKey)
  }
  return Object.keys(problems).filter(problem => problems[problem])
}

describe('readSettings with hostile input', () => {
  it.each(Object.values(Inputs))(
    'returns valid Settings or an InputError naming %s, and nothing else',
    name => {
      fc.assert(
        fc.property(fc.constantFrom(...COMMAND_NAMES), hostileText, (command, value) => {
          const given = getInputFrom({ ...VALID_INPUTS, [Inputs.Command]: command, [name]: value })
          // As the runner does: inputs arrive trimmed.
          const getInput = (input: string): string => given(input).trim()
          let settings: Settings
          try {
            settings = readSettings(getInput, { now: NOW_MS })
          } catch (error) {
            if (!(error instanceof InputError)) throw error
            // A key found in another input is named by that input, and as the API key's value.
            const named = name === Inputs.ApiKey ? /"api-key"|the API key's value/ : `"${name}"`
            expect(error.message).toMatch(named)
            expect(unprintable(error.message, getInput(Inputs.ApiKey))).toEqual([])
            return
          }
          expect(brokenRules(settings)).toEqual([])
        }),
        { numRuns: NUM_RUNS }
      )
    }
  )

  it('never quotes any part of the key, wherever it is pasted', () => {
    const visibleAscii = character(0x21, 0x7e)
    fc.assert(
      fc.property(
        fc.string({ unit: visibleAscii, minLength: 16, maxLength: 80 }),
        fc.constantFrom(...Object.values(Inputs).filter(name => name !== Inputs.ApiKey)),
        fc.string({ maxLength: 50 }),
        (apiKey, name, around) => {
          const error = inputError(() =>
            read({
              ...VALID_INPUTS,
              [Inputs.ApiKey]: apiKey,
              [name]: `${around}${apiKey}${around}`.trim()
            })
          )
          expect(error.message).not.toContain(apiKey.slice(0, 12))
        }
      ),
      { numRuns: NUM_RUNS }
    )
  })
})
