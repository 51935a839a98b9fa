/**
 * The failure policy as the command line applies it, in process against the emulator through
 * `main`: for each cell of the table (policy.test.ts), the exit status, whether the deploy ran,
 * whether its change was recorded, and the line that says it in the command line's words (never
 * the action's). A cancel is a signal the process receives, as a CI sends it.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Emulator } from '../../emulator/emulator.ts'
import { main } from '../../src/cli/main.ts'
import type { Trouble } from '../../src/policy.ts'
import { arrivalOf } from '../support/arrival.ts'
import { useEmulator } from '../support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})
afterEach(() => {
  jest.restoreAllMocks()
})

const work = mkdtempSync(join(tmpdir(), 'cta-cli-policy-'))
/** What the command line must never say: the action's words. */
const ACTION_WORDS =
  /the step|the action\b|workflow|job summary|GITHUB_OUTPUT|GITHUB_STEP_SUMMARY|\$\{\{|Input "/i

/** What follows an error before the deploy, by the verdict, in the command line's words. */
const BEFORE_DEPLOY_WORDS = {
  failsNow: 'The deploy was not run (--fail-on-error true).',
  failsAfterDeploy:
    'The deploy runs, unrecorded, and the command exits 1 after it; to run it unrecorded without failing, give --fail-on-error false.',
  recordsAfterDeploy: 'The deploy runs; its change will be recorded when it ends.',
  warns: 'The deploy runs, unrecorded (--fail-on-error false).'
}
/** Why an error does not count, by what went wrong or by --fail-on-error false. */
const NOT_COUNTED = {
  outage:
    '(Not counted as a failure: an outage fails the command only under --fail-on-error true.)',
  false: '(Not counted as a failure: --fail-on-error is false.)'
}

async function cli(args: string[], env: Record<string, string> = {}) {
  const lines: string[] = []
  let stdout = ''
  const summary = join(work, 'summary.md')
  writeFileSync(summary, '')
  const status = await main(
    [...args.slice(0, 1), '--max-attempts', '1', '--summary', summary, ...args.slice(1)],
    {
      CHANGE_TRACKING_API_KEY: emulator.apiKey,
      CHANGE_TRACKING_BASE_URL: emulator.url,
      CHANGE_TRACKING_VERSION: '1.4.2',
      CHANGE_TRACKING_SERVICE: 'shop',
      CHANGE_TRACKING_INCLUDE_COMMITS: 'false',
      ...env
    },
    {
      stdout: text => {
        stdout += String(text)
      },
      stderr: line => lines.push(line),
      cwd: work
    }
  )
  const said = [...lines, stdout, readFileSync(summary, 'utf8')].join('\n')
  expect(said).not.toMatch(ACTION_WORDS)
  return { status, stderr: lines.join('\n'), recorded: emulator.changes.size }
}

/** `run` with a deploy that leaves a mark: whether it ran, with the exit status and the lines. */
async function run(args: string[], env: Record<string, string> = {}) {
  const marker = join(work, `deployed-${Math.random()}`)
  // touch, not a Node: a deploy's start costs a millisecond, not a tenth of a second.
  const found = await cli(['run', ...args, '--', 'touch', marker], env)
  let ran = true
  try {
    readFileSync(marker)
  } catch {
    ran = false
  }
  return { ...found, ran }
}

/** Variables and faults that make each trouble happen, at the key check or when recording. */
function cause(trouble: Trouble, at: 'GET /v2/hello' | 'POST /v2/change'): Record<string, string> {
  if (trouble === 'input') return { CHANGE_TRACKING_TIMEOUT_SECONDS: 'soon' }
  // The key itself is what the service rejects: every call meets it.
  if (trouble === 'mistake') return { CHANGE_TRACKING_API_KEY: 'not-the-key' }
  emulator.inject(at, { status: 503 })
  return {}
}

/** A line as the command line prints it: its prefix, then the text, whole. */
const line = (prefix: 'error' | 'warning', text: string): RegExp =>
  new RegExp(`^${prefix}: .*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm')

// prettier-ignore
const BEFORE_DEPLOY = [
  // trouble   mode     exit  the deploy runs  recorded  said as     in these words
  ['input',   'auto',  1,    true,            false,    'error',    BEFORE_DEPLOY_WORDS.failsAfterDeploy],
  ['input',   'true',  1,    false,           false,    'error',    BEFORE_DEPLOY_WORDS.failsNow],
  ['input',   'false', 0,    true,            false,    'warning',  BEFORE_DEPLOY_WORDS.warns],
  ['mistake', 'auto',  1,    true,            false,    'error',    BEFORE_DEPLOY_WORDS.failsAfterDeploy],
  ['mistake', 'true',  1,    false,           false,    'error',    BEFORE_DEPLOY_WORDS.failsNow],
  ['mistake', 'false', 0,    true,            false,    'warning',  BEFORE_DEPLOY_WORDS.warns],
  ['outage',  'auto',  0,    true,            true,     'warning',  BEFORE_DEPLOY_WORDS.recordsAfterDeploy],
  ['outage',  'true',  1,    false,           false,    'error',    BEFORE_DEPLOY_WORDS.failsNow],
  ['outage',  'false', 0,    true,            true,     'warning',  BEFORE_DEPLOY_WORDS.recordsAfterDeploy]
] as const

describe('run: an error at the key check, before the deploy', () => {
  it.each(BEFORE_DEPLOY)(
    '%s, under %s: exit %i; the deploy runs: %s; recorded: %s; says "%s: … %s"',
    async (trouble, mode, status, ran, recorded, prefix, words) => {
      const env = cause(trouble, 'GET /v2/hello')
      const found = await run(['--fail-on-error', mode], env)
      expect(found).toMatchObject({ status, ran, recorded: recorded ? 1 : 0 })
      expect(found.stderr).toMatch(line(prefix, words))
    }
  )

  it.each([
    ['auto', 'warning'],
    ['true', 'error'],
    ['false', 'warning']
  ] as const)(
    'a cancel under %s: the deploy is not started, one %s line, exit 129, nothing recorded',
    async (mode, prefix) => {
      jest.spyOn(process, 'exit').mockImplementation(() => undefined as never)
      emulator.inject('GET /v2/hello', { hang: true })
      void arrivalOf(emulator, 'GET /v2/hello').then(() => process.emit('SIGHUP', 'SIGHUP'))
      const found = await run(['--fail-on-error', mode, '--timeout-seconds', '300'])
      expect(found).toMatchObject({ status: 129, ran: false, recorded: 0 })
      expect(found.stderr).toBe(
        `${prefix}: The deploy was not started: SIGHUP arrived during the key check.`
      )
    }
  )

  it('a missing key is a mistake, said in the command line’s own sentence', async () => {
    const found = await run([], { CHANGE_TRACKING_API_KEY: '' })
    expect(found).toMatchObject({ status: 1, ran: true, recorded: 0 })
    expect(found.stderr).toMatch(
      /^error: No API key: set CHANGE_TRACKING_API_KEY, or give --api-key-file\. The deploy runs, unrecorded/m
    )
  })

  it('an invalid value is named as it was given: its variable', async () => {
    const found = await run(['--fail-on-error', 'true'], {
      CHANGE_TRACKING_TIMEOUT_SECONDS: 'soon'
    })
    expect(found.stderr).toMatch(/^error: CHANGE_TRACKING_TIMEOUT_SECONDS /m)
  })

  it('a key file that never ends is read no further than its bound: change says so in one line, exits 1 and sends nothing', async () => {
    const { status, stderr } = await cli(['change', '--api-key-file', '/dev/zero'])
    expect(status).toBe(1)
    expect(stderr).toMatch(/^error: --api-key-file is too large: more than 64 KiB\.$/m)
    expect(emulator.requests).toEqual([])
  })
})

describe('run: an outage at the key check and at the recording', () => {
  it('runs the deploy, keeps its status and says its change was not recorded', async () => {
    emulator.inject('GET /v2/hello', { status: 503 }, Infinity)
    emulator.inject('POST /v2/change', { status: 503 }, Infinity)
    const found = await run([])
    expect(found).toMatchObject({ status: 0, ran: true, recorded: 0 })
    expect(found.stderr).toMatch(
      /^warning: GET \/v2\/hello failed with HTTP 503.*The deploy runs; its change will be recorded when it ends\.$/m
    )
    expect(found.stderr).toMatch(/^warning: POST \/v2\/change failed with HTTP 503/m)
  })
})

describe('run: a deploy command that cannot start', () => {
  it('exits 127, naming it, and records no change', async () => {
    const { status, stderr } = await cli(['run', '--', 'change-tracking-no-such-deploy'])
    expect(status).toBe(127)
    expect(stderr).toMatch(
      /^error: The deploy command "change-tracking-no-such-deploy" was not found/m
    )
    expect(emulator.changes.size).toBe(0)
  })
})

const unwritable = join(work, 'no-such-folder', 'outputs.env')

// prettier-ignore
const RECORDING = [
  // trouble      mode     exit  recorded  said as     in these words
  ['input',      'auto',  2,    false,    'error',    ''],
  ['input',      'true',  2,    false,    'error',    ''],
  ['input',      'false', 0,    false,    'warning',  NOT_COUNTED.false],
  ['mistake',    'auto',  1,    false,    'error',    ''],
  ['mistake',    'true',  1,    false,    'error',    ''],
  ['mistake',    'false', 0,    false,    'warning',  NOT_COUNTED.false],
  ['outage',     'auto',  0,    false,    'warning',  NOT_COUNTED.outage],
  ['outage',     'true',  1,    false,    'error',    ''],
  ['outage',     'false', 0,    false,    'warning',  NOT_COUNTED.false],
  // An output file that cannot be written is a failure to report.
  ['unreported', 'auto',  0,    true,     'warning',  `--outputs "${unwritable}" could not be written (ENOENT).`],
  ['unreported', 'true',  1,    true,     'error',    `--outputs "${unwritable}" could not be written (ENOENT).`],
  ['unreported', 'false', 0,    true,     'warning',  `--outputs "${unwritable}" could not be written (ENOENT).`]
] as const

describe('change: an error when recording', () => {
  it.each(RECORDING)(
    '%s, under %s: exit %i; recorded: %s; says "%s: … %s"',
    async (trouble, mode, status, recorded, prefix, words) => {
      const env =
        trouble === 'unreported'
          ? { CHANGE_TRACKING_OUTPUTS: unwritable }
          : cause(trouble, 'POST /v2/change')
      const found = await cli(['change', '--fail-on-error', mode], env)
      expect(found).toMatchObject({ status, recorded: recorded ? 1 : 0 })
      expect(found.stderr).toMatch(new RegExp(`^${prefix}: `, 'm'))
      // An input is named as it was given: here, its variable.
      if (trouble === 'input') expect(found.stderr).toContain('CHANGE_TRACKING_TIMEOUT_SECONDS')
      if (words) expect(found.stderr).toMatch(line(prefix, words))
      else expect(found.stderr).not.toMatch(/not counted/i)
    }
  )

  it.each([
    ['auto', 'warning'],
    ['true', 'error'],
    ['false', 'warning']
  ] as const)(
    'a cancel (SIGTERM) under %s stops the change in flight at once, says it on an %s line naming the change, and exits 143',
    async (mode, prefix) => {
      jest.spyOn(process, 'exit').mockImplementation(() => undefined as never)
      emulator.inject('POST /v2/change', { hang: true })
      void arrivalOf(emulator, 'POST /v2/change').then(() => process.emit('SIGTERM', 'SIGTERM'))
      const found = await cli(['change', '--fail-on-error', mode, '--timeout-seconds', '300'])
      expect(found.status).toBe(143)
      expect(found.stderr).toMatch(
        line(
          prefix,
          'The run was cancelled (SIGTERM) before it finished. A change (POST /v2/change) was in flight, so it may already have been recorded.'
        )
      )
    }
  )
})

describe('run: an error when recording, after the deploy', () => {
  it('counts as when recording alone, after a successful deploy', async () => {
    const found = await run(['--fail-on-error', 'false'], {})
    expect(found).toMatchObject({ status: 0, ran: true, recorded: 1 })
    emulator.inject('POST /v2/change', { status: 401 })
    expect(await run([])).toMatchObject({ status: 1, ran: true, recorded: 1 })
  })

  it('keeps a failed deploy’s own status, whatever tracking did', async () => {
    emulator.inject('POST /v2/change', { status: 401 })
    const failed = await cli(['run', '--fail-on-error', 'true', '--', 'sh', '-c', 'exit 3'])
    expect(failed.status).toBe(3)
    const unwritten = ['run', '--fail-on-error', 'true', '--outputs', unwritable]
    expect((await cli([...unwritten, '--', 'sh', '-c', 'exit 3'])).status).toBe(3)
  })
})

// prettier-ignore
const READING = [
  // trouble   mode     exit
  ['input',   'auto',  2],
  ['input',   'true',  2],
  ['input',   'false', 2],
  ['mistake', 'auto',  1],
  ['mistake', 'true',  1],
  ['mistake', 'false', 1],
  ['outage',  'auto',  1],
  ['outage',  'true',  1],
  ['outage',  'false', 1]
] as const

describe('the read commands', () => {
  it.each(READING)(
    'fail on %s under %s, exit %i, and never say they do not',
    async (trouble, mode, status) => {
      // get-change without its id is an input error; hello meets the key or the outage.
      const command = trouble === 'input' ? 'get-change' : 'hello'
      const env = trouble === 'input' ? {} : cause(trouble, 'GET /v2/hello')
      const found = await cli([command, '--fail-on-error', mode], env)
      expect(found.status).toBe(status)
      expect(found.stderr).toMatch(/^error: /m)
      expect(found.stderr).not.toMatch(/not counted|not failing/i)
    }
  )
})

describe('what the command line prints', () => {
  it('prints its help as lines when no command is given, and exits 2', async () => {
    const lines: string[] = []
    const status = await main(
      [],
      {},
      { stdout: () => {}, stderr: line => lines.push(line), cwd: work }
    )
    expect(status).toBe(2)
    expect(lines.join('\n').split('\n')).toEqual(
      expect.arrayContaining([
        'Usage: change-tracking [options] [command]',
        'Commands:',
        // The receiver, whose door parses its own flags, is named too.
        "Argo CD's and Flux's deploys: change-tracking serve --help"
      ])
    )
  })

  it('refuses a wrong command line with exit 2, before any request', async () => {
    const typo = await cli(['change', '--enviroment', 'prod'])
    expect(typo.status).toBe(2)
    expect(typo.stderr).toMatch(/unknown option '--enviroment'[\s\S]*--environment/)
    const key = await cli(['change', '--api-key', 'sk_live_secret'])
    expect(key.status).toBe(2)
    expect(key.stderr).toContain('process listings and shell history')
    expect(key.stderr).not.toContain('sk_live_secret')
    expect(emulator.requests).toEqual([])
  })

  it('never repeats the key in a parser message, wherever the flag stands', async () => {
    const key = emulator.apiKey
    for (const args of [
      [`--api-key=${key}`, 'hello'],
      ['hello', `--apikey=${key}`],
      ['hello', `--API-KEY=${key}`]
    ]) {
      const { status, stderr } = await cli(args)
      expect(status).toBe(2)
      expect(stderr).toMatch(/^error: /)
      expect(stderr).not.toContain(key)
    }
  })

  it('redacts --debug lines: a CI variable that holds the key shows ***', async () => {
    const { stderr } = await cli(['change', '--debug', '--dry-run'], {
      CHANGE_TRACKING_USER: '',
      GITLAB_CI: 'true',
      GITLAB_USER_LOGIN: emulator.apiKey
    })
    expect(stderr).toMatch(/^debug: user: \*\*\* \(from GITLAB_USER_LOGIN\)$/m)
    expect(stderr).not.toContain(emulator.apiKey)
  })

  it('prints run --json as the last whole line, after a deploy’s output that ended mid-line', async () => {
    let stdout = ''
    const status = await main(
      ['run', '--json', '--', 'printf', 'x'],
      {
        CHANGE_TRACKING_API_KEY: emulator.apiKey,
        CHANGE_TRACKING_BASE_URL: emulator.url,
        CHANGE_TRACKING_VERSION: '1.4.2',
        CHANGE_TRACKING_SERVICE: 'shop',
        CHANGE_TRACKING_INCLUDE_COMMITS: 'false'
      },
      {
        stdout: text => {
          stdout += String(text)
        },
        stderr: () => {},
        cwd: work
      }
    )
    expect(status).toBe(0)
    const [deployed, json, end] = stdout.split('\n')
    expect(deployed).toBe('x')
    expect(JSON.parse(json)).toMatchObject({ 'change-id': expect.any(String) })
    expect(end).toBe('')
  })
})
