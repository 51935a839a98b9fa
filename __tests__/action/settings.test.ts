import { describe, expect, it } from '@jest/globals'
import { COMMANDS, Inputs, MAX_CREATED_AT_FUTURE_SECONDS } from '../../src/action/names.ts'
import type { InputName } from '../../src/action/names.ts'
import { InputError } from '../../src/errors.ts'
import { inputError } from '../support/input-error.ts'
import { parseBaseUrl } from '../../src/action/base-url.ts'
import { parseCreatedAt } from '../../src/action/created-at.ts'
import {
  parseBoolean,
  parseCommand,
  parseEventIds,
  parseFailOnError,
  parseJson,
  parseLabels,
  parseWholeNumber
} from '../../src/action/parsers.ts'
import { readSettings } from '../../src/action/settings.ts'
import type { GetInput, Settings } from '../../src/action/settings.ts'
import type { ChangeFields } from '../../src/change.ts'

const NOW_MS = Date.UTC(2025, 10, 21, 12, 0, 0)
const NOW_S = NOW_MS / 1000
const API_KEY = 'ctk_live_7f3a9c2e51b84d06a1e9f0c3b2d7e8a4'
const BASE_URL = 'https://change-tracking.test/'

function getInputFrom(given: Partial<Record<InputName, string>>): GetInput {
  const all: Partial<Record<string, string>> = {
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
  it('applies every default when only api-key and base-url are given', () => {
    expect(read()).toEqual({
      apiKey: API_KEY,
      baseUrl: new URL(BASE_URL),
      command: 'change',
      change: {},
      githubMetadata: true,
      failOnError: 'auto',
      dryRun: false,
      timeoutSeconds: 30,
      maxAttempts: 4,
      jobSummary: true,
      githubToken: '',
      includeCommits: true,
      recordAt: 'now',
      jobStatus: { outcome: 'unknown', status: '' }
    })
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
      [Inputs.JobStatus]: 'cancelled'
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
        createdAt: Date.UTC(2025, 10, 21, 10) / 1000
      },
      githubMetadata: false,
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
      previousVersion: 'v1.2.3',
      recordAt: 'job-end',
      jobStatus: { outcome: 'cancelled', status: 'cancelled' }
    })
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
    const inTwoDays = String(Math.floor(Date.now() / 1000) + 2 * MAX_CREATED_AT_FUTURE_SECONDS)
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

    it.each(otherInputs)('refuses %s when it contains the key, naming both inputs', name => {
      const error = inputError(() => read({ [name]: `x ${API_KEY} y` }))
      expect(error.input).toBe(name)
      expect(error.message).toContain(`Input "${name}"`)
      expect(error.message).toContain('"api-key"')
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
      expect(error.message).toContain('contains the value of input "api-key"')
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
        'Inputs "events" and "events-file" are both given; when command is "events", give exactly one of them.'
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
      expect(Buffer.from(settings.change.description ?? '')).toEqual(Buffer.from(description))
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

  describe('error messages', () => {
    it('quotes at most about 40 characters of 100 KB of junk, with its length', () => {
      const junk = 'x'.repeat(100_000)
      const error = inputError(() => read({ [Inputs.TimeoutSeconds]: junk }))
      expect(error.message.length).toBeLessThan(200)
      expect(error.message).toContain(`"${'x'.repeat(40)}"… (100000 characters)`)
    })

    it('escapes control characters, line separators and bidi overrides in quoted values', () => {
      const error = inputError(() =>
        read({ [Inputs.DryRun]: 'a\nb\u0000c\u0085d\u2028e\u202ef\u0007' })
      )
      expect(error.message).toContain('"a\\nb\\u0000c\\u0085d\\u2028e\\u202ef\\u0007"')
      expect(error.message).not.toMatch(/[\p{Cc}\u2028\u2029\u202e]/u)
    })

    it('does not cut an emoji in half when truncating', () => {
      const error = inputError(() => parseBoolean('dry-run', `${'x'.repeat(39)}🚀🚀`))
      expect(error.message).toContain(`"${'x'.repeat(39)}"…`)
      expect(error.message).not.toMatch(/\\ud83d/)
    })
  })
})

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

  it('reads max-attempts from 1 to 10 through readSettings', () => {
    expect(read({ [Inputs.MaxAttempts]: '10' }).maxAttempts).toBe(10)
    expect(inputError(() => read({ [Inputs.MaxAttempts]: '11' })).message).toBe(
      'Input "max-attempts" must be a whole number from 1 to 10; got "11".'
    )
    expect(inputError(() => read({ [Inputs.TimeoutSeconds]: 'abc' })).message).toBe(
      'Input "timeout-seconds" must be a whole number from 1 to 300; got "abc".'
    )
  })
})

describe('parseCommand', () => {
  it.each([...COMMANDS])('accepts %s', command => {
    expect(parseCommand(command)).toBe(command)
  })

  it.each(['deploy', 'Change', 'heartbeats', ''])('refuses %j, listing the commands', raw => {
    const error = inputError(() => parseCommand(raw))
    expect(error.input).toBe(Inputs.Command)
    expect(error.message).toBe(
      `Input "command" must be one of change, heartbeat, events, event-results, get-change, hello; got ${JSON.stringify(raw)}.`
    )
  })

  it('applies the default command when the input is empty', () => {
    expect(read({ [Inputs.Command]: '' }).command).toBe('change')
  })
})

describe('parseFailOnError', () => {
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
    expect(error.message).toContain('both given')
  })
})

describe('the lookup inputs', () => {
  it.each(['a b', 'main..dev', 'v1~2', 'x'.repeat(256), 'tag\u0007'])(
    'refuses previous-version %j, which is no SHA, tag or branch',
    raw => {
      expect(inputError(() => read({ [Inputs.PreviousVersion]: raw })).input).toBe(
        Inputs.PreviousVersion
      )
    }
  )

  it('refuses a github-token with spaces without quoting it', () => {
    const error = inputError(() => read({ [Inputs.GithubToken]: 'ghp_abc def' }))
    expect(error.input).toBe(Inputs.GithubToken)
    expect(error.message).not.toContain('ghp_abc')
  })
})

describe('custom-metadata nesting', () => {
  it('refuses JSON nested deeper than the bound, naming the input and the line', () => {
    const deep = `{"a":\n${'['.repeat(20_000)}${']'.repeat(20_000)}}`
    const error = inputError(() => read({ [Inputs.CustomMetadata]: deep }))
    expect(error.input).toBe(Inputs.CustomMetadata)
    expect(error.message).toMatch(/deeper than 512 levels \(at line 2, column 512\)/)
  })

  it('accepts JSON nested exactly to the bound', () => {
    const deep = `${'['.repeat(512)}${']'.repeat(512)}`
    expect(read({ [Inputs.CustomMetadata]: deep }).change.customMetadata).toBeDefined()
  })
})

describe('parseBaseUrl', () => {
  it.each([
    ['http with credentials', 'http://alice:hunter2@host.example/', '"http://host.example"'],
    [
      'another scheme with credentials',
      'ftp://alice:hunter2@host.example/x',
      '"ftp://host.example"'
    ],
    [
      'an unparsable URL with credentials',
      'https://alice:hunter2@exa mple.com/',
      '"https://exa mple.com"'
    ],
    [
      'a query holding a token',
      'https://host.example:8443/?token=s3cr3t#fragsecret',
      '"https://host.example:8443"'
    ],
    ['credentials on https', 'https://alice:hunter2@host.example/', '"https://host.example"']
  ])('names only the scheme, host and port of %s', (_, raw, shown) => {
    const message = inputError(() => parseBaseUrl(raw)).message
    expect(message).toContain(shown)
    for (const secret of ['alice', 'hunter2', 's3cr3t', 'fragsecret'])
      expect(message).not.toContain(secret)
  })

  it.each([
    ['https://api.example.com', 'https://api.example.com/'],
    ['https://api.example.com/', 'https://api.example.com/'],
    ['https://host/api', 'https://host/api/'],
    ['https://host/api/', 'https://host/api/'],
    ['https://HOST:8443/a/b', 'https://host:8443/a/b/'],
    ['https://127.0.0.1:9000', 'https://127.0.0.1:9000/']
  ])('normalises %s to %s', (raw, expected) => {
    expect(parseBaseUrl(raw).href).toBe(expected)
  })

  it('resolves endpoint paths below the path prefix', () => {
    expect(new URL('v2/change', parseBaseUrl('https://host/api')).href).toBe(
      'https://host/api/v2/change'
    )
  })

  it('is required', () => {
    expect(inputError(() => parseBaseUrl('')).message).toMatch(/^Input "base-url" is required/)
  })

  it('refuses plain HTTP, saying the key would travel in clear text', () => {
    const error = inputError(() => parseBaseUrl('http://api.example.com'))
    expect(error.input).toBe(Inputs.BaseUrl)
    expect(error.message).toContain(
      'plain HTTP is refused because the API key would travel in clear text'
    )
  })

  it.each(['ftp://api.example.com', 'file:///etc/passwd', 'wss://api.example.com'])(
    'refuses %s, requiring HTTPS',
    raw => {
      expect(inputError(() => parseBaseUrl(raw)).message).toContain('HTTPS is required')
    }
  )

  it.each(['api.example.com', '/v2', 'https://', 'https://exa mple.com', 'not a url'])(
    'refuses %j as not an absolute HTTPS URL',
    raw => {
      expect(inputError(() => parseBaseUrl(raw)).message).toMatch(
        /^Input "base-url" must be an absolute HTTPS URL/
      )
    }
  )

  it('refuses a user name or password without quoting them', () => {
    const error = inputError(() => parseBaseUrl('https://admin:hunter2@api.example.com/'))
    expect(error.message).toContain('must not contain a user name or password')
    expect(error.message).not.toContain('hunter2')
  })

  it.each(['https://host/?a=1', 'https://host/?', 'https://host/#top', 'https://host/#'])(
    'refuses a query or fragment in %s',
    raw => {
      expect(inputError(() => parseBaseUrl(raw)).message).toContain(
        'must not have a query (?…) or fragment (#…)'
      )
    }
  )

  it('refuses control characters, which the URL parser would silently drop', () => {
    expect(inputError(() => parseBaseUrl('https://ho\tst/')).message).toContain('U+0009')
  })
})

describe('parseCreatedAt', () => {
  const NOV_21_10H = Date.UTC(2025, 10, 21, 10) / 1000

  it.each([
    ['Unix seconds', String(NOV_21_10H), NOV_21_10H],
    ['decimal Unix seconds, floored', `${NOV_21_10H}.999`, NOV_21_10H],
    ['Unix milliseconds', `${NOV_21_10H * 1000 + 999}`, NOV_21_10H],
    ['zero', '0', 0],
    ['a small number as seconds', '1', 1],
    ['an ISO date, as midnight UTC', '2025-11-21', Date.UTC(2025, 10, 21) / 1000],
    ['an ISO date-time in UTC', '2025-11-21T10:00:00Z', NOV_21_10H],
    ['fractional seconds, floored', '2025-11-21T10:00:00.999Z', NOV_21_10H],
    ['minutes only', '2025-11-21T10:00Z', NOV_21_10H],
    ['a positive offset', '2025-11-21T12:00:00+02:00', NOV_21_10H],
    ['a negative offset', '2025-11-21T05:30:00-04:30', NOV_21_10H],
    ['an offset without colon', '2025-11-21T12:00:00+0200', NOV_21_10H],
    ['lower-case t and z', '2025-11-21t10:00:00z', NOV_21_10H],
    ['a space separator', '2025-11-21 10:00:00Z', NOV_21_10H],
    ['a leap day', '2024-02-29', Date.UTC(2024, 1, 29) / 1000],
    ['the epoch', '1970-01-01T00:00:00Z', 0],
    ['exactly one day ahead', String(NOW_S + MAX_CREATED_AT_FUTURE_SECONDS), NOW_S + 86_400]
  ])('reads %s', (_, raw, expected) => {
    expect(parseCreatedAt(raw, NOW_MS)).toBe(expected)
  })

  it('is undefined when empty', () => {
    expect(parseCreatedAt('', NOW_MS)).toBeUndefined()
    expect(read().change.createdAt).toBeUndefined()
  })

  it.each([
    'abc',
    'yesterday',
    '1e9',
    '0x10',
    '.5',
    '1.',
    '2025/11/21',
    '21-11-2025',
    '2025-11-21T10',
    '2025-11-21T10:00:00+2',
    'Fri, 21 Nov 2025 10:00:00 GMT',
    '2025-11-21T10:00:00Z trailing'
  ])('refuses %j, listing the accepted forms', raw => {
    const error = inputError(() => parseCreatedAt(raw, NOW_MS))
    expect(error.input).toBe(Inputs.CreatedAt)
    expect(error.message).toMatch(/^Input "created-at" must be Unix seconds/)
    expect(error.message).toContain('Unix milliseconds')
    expect(error.message).toContain('ISO 8601')
  })

  it('refuses a date-time without a time zone, saying so', () => {
    expect(inputError(() => parseCreatedAt('2025-11-21T10:00:00', NOW_MS)).message).toContain(
      'without a time zone'
    )
  })

  it.each([
    '2025-02-29',
    '2025-13-01',
    '2025-04-31',
    '2025-11-21T24:00:00Z',
    '2025-11-21T10:60Z',
    '2025-11-21T10:00:00+24:00'
  ])('refuses %j, which is not a real date or time', raw => {
    expect(inputError(() => parseCreatedAt(raw, NOW_MS)).message).toMatch(
      /^Input "created-at" is not a real date and time/
    )
  })

  it.each(['-1', '-1700000000000', '1969-12-31T23:59:59Z', '0050-01-01'])(
    'refuses %j before 1970',
    raw => {
      expect(inputError(() => parseCreatedAt(raw, NOW_MS)).message).toMatch(
        /^Input "created-at" must not be before 1970-01-01T00:00:00Z; got /
      )
    }
  )

  it('refuses a time more than a day ahead, showing how it was read', () => {
    const raw = String(NOW_S + MAX_CREATED_AT_FUTURE_SECONDS + 1)
    const error = inputError(() => parseCreatedAt(raw, NOW_MS))
    expect(error.message).toContain('must not lie more than 24 hours in the future')
    expect(error.message).toContain('read as 2025-11-22T12:00:01.000Z')
    expect(inputError(() => parseCreatedAt('9'.repeat(400), NOW_MS)).message).toContain(
      'in the future'
    )
  })

  it('turns -0 into 0', () => {
    expect(Object.is(parseCreatedAt('-0', NOW_MS), 0)).toBe(true)
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
      'Input "labels" must not contain control characters; found U+0000 at character 2 in "a\\u0000b".'
    )
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

  it('does not repeat the parser message, which quotes the input unescaped', () => {
    const error = inputError(() => parseJson('custom-metadata', `[1,\u0007${'x'.repeat(100)}`))
    expect(error.message).not.toMatch(/\p{Cc}/u)
    expect(error.message).not.toContain('x'.repeat(50))
  })

  it('reads custom-metadata through readSettings', () => {
    expect(read({ [Inputs.CustomMetadata]: '[1]' }).change.customMetadata).toEqual([1])
    expect(inputError(() => read({ [Inputs.CustomMetadata]: '{"a":' })).input).toBe(
      Inputs.CustomMetadata
    )
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
