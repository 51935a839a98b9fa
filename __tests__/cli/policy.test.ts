/**
 * The failure policy through the command line's door, in process against the emulator: each
 * cell of the table (before the deploy, recording, reading) by mode, with the exit status, whether
 * the deploy ran and whether its change was recorded; and none of the action's words.
 */
import { describe, expect, it } from '@jest/globals'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Emulator, Fault } from '../../emulator/emulator.ts'
import { main } from '../../src/cli/main.ts'
import { useEmulator } from '../support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => (emulator = started))

const work = mkdtempSync(join(tmpdir(), 'cta-cli-policy-'))
const MISTAKE: Fault = { status: 401 }
const OUTAGE: Fault = { status: 503 }
/** What the command line must never say: the action's words. */
const ACTION_WORDS =
  /the step|the action\b|workflow|job summary|GITHUB_OUTPUT|GITHUB_STEP_SUMMARY|\$\{\{|Input "/i

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
    { stdout: text => (stdout += String(text)), stderr: line => lines.push(line), cwd: work }
  )
  const said = [...lines, stdout, readFileSync(summary, 'utf8')].join('\n')
  expect(said).not.toMatch(ACTION_WORDS)
  return { status, stderr: lines.join('\n') }
}

/** `run` with a deploy that leaves a mark; how many times it ran, and how many changes. */
async function run(mode: string, env: Record<string, string> = {}) {
  const marker = join(work, `deployed-${Math.random()}`)
  // touch, not a Node: a deploy's start costs a millisecond, not a tenth of a second.
  const deploy = ['touch', marker]
  const { status, stderr } = await cli(['run', '--fail-on-error', mode, '--', ...deploy], env)
  const ran = (() => {
    try {
      return readFileSync(marker, 'utf8') === '' ? 1 : 0
    } catch {
      return 0
    }
  })()
  return { status, ran, recorded: emulator.changes.size, stderr }
}

describe('run: an error at the key check, before the deploy', () => {
  it.each([
    // mode, fault, exit status, deploy ran, recorded
    ['auto', MISTAKE, 1, 1, 0],
    ['true', MISTAKE, 1, 0, 0],
    ['false', MISTAKE, 0, 1, 0],
    ['auto', OUTAGE, 0, 1, 1],
    ['true', OUTAGE, 1, 0, 0],
    ['false', OUTAGE, 0, 1, 1]
  ] as const)(
    'under %s, %j: exit %i, deploy run %i times, %i recorded',
    async (mode, fault, exit, ran, recorded) => {
      emulator.inject('GET /v2/hello', fault)
      const found = await run(mode)
      expect(found).toMatchObject({ status: exit, ran, recorded })
      if (mode === 'auto' && fault === MISTAKE)
        expect(found.stderr).toContain('--fail-on-error false')
      if (mode === 'true') expect(found.stderr).toContain('The deploy was not run')
    }
  )

  it('a missing key is a mistake: under auto the deploy runs, unrecorded, then the command exits 1', async () => {
    const found = await run('auto', { CHANGE_TRACKING_API_KEY: '' })
    expect(found).toMatchObject({ status: 1, ran: 1, recorded: 0 })
    expect(found.stderr).toMatch(
      /^error: No API key: set CHANGE_TRACKING_API_KEY, or give --api-key-file\. The deploy runs, unrecorded/m
    )
  })

  it('a key file that never ends is read no further than its bound: change says so in one line, exits 1 and sends nothing', async () => {
    const { status, stderr } = await cli(['change', '--api-key-file', '/dev/zero'])
    expect(status).toBe(1)
    expect(stderr).toMatch(/^error: --api-key-file is too large: more than 64 KiB\.$/m)
    expect(emulator.requests).toEqual([])
  })

  it('an invalid value is a mistake too: under auto the deploy runs, then exit 1; under true it does not run', async () => {
    expect(await run('auto', { CHANGE_TRACKING_TIMEOUT_SECONDS: 'soon' })).toMatchObject({
      status: 1,
      ran: 1
    })
    const strict = await run('true', { CHANGE_TRACKING_TIMEOUT_SECONDS: 'soon' })
    expect(strict).toMatchObject({ status: 1, ran: 0 })
    expect(strict.stderr).toMatch(/^error: CHANGE_TRACKING_TIMEOUT_SECONDS /m)
  })
})

describe('run: an outage at the key check and at the recording', () => {
  it('runs the deploy, keeps its status and says its change was not recorded', async () => {
    emulator.inject('GET /v2/hello', OUTAGE, Infinity)
    emulator.inject('POST /v2/change', OUTAGE, Infinity)
    const found = await run('auto')
    expect(found).toMatchObject({ status: 0, ran: 1, recorded: 0 })
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

/** When recording, the exit status: a mistake fails under auto and true, an outage only under true. */
const WHEN_RECORDING = [
  ['auto', MISTAKE, 1],
  ['true', MISTAKE, 1],
  ['false', MISTAKE, 0],
  ['auto', OUTAGE, 0],
  ['true', OUTAGE, 1],
  ['false', OUTAGE, 0]
] as const

describe('run: an error recording after a successful deploy', () => {
  it.each(WHEN_RECORDING)('under %s, %j: exit %i', async (mode, fault, exit) => {
    emulator.inject('POST /v2/change', fault)
    expect(await run(mode)).toMatchObject({ status: exit, ran: 1, recorded: 0 })
  })

  it('keeps a failed deploy’s own status, whatever tracking did', async () => {
    emulator.inject('POST /v2/change', MISTAKE)
    const { status } = await cli(['run', '--fail-on-error', 'true', '--', 'sh', '-c', 'exit 3'])
    expect(status).toBe(3)
  })
})

describe('an output file that cannot be written: a failure to report', () => {
  const unwritable = join(work, 'no-such-folder', 'outputs.env')

  it.each([
    ['auto', 0, 'warning'],
    ['false', 0, 'warning'],
    ['true', 1, 'error']
  ] as const)('under %s: exit %i, with a %s, and the change recorded', async (mode, exit, kind) => {
    const found = await run(mode, { CHANGE_TRACKING_OUTPUTS: unwritable })
    expect(found).toMatchObject({ status: exit, ran: 1, recorded: 1 })
    expect(found.stderr).toContain(
      `${kind}: --outputs "${unwritable}" could not be written (ENOENT).`
    )
  })

  it('keeps a failed deploy’s own status under true', async () => {
    const args = [
      'run',
      '--fail-on-error',
      'true',
      '--outputs',
      unwritable,
      '--',
      'sh',
      '-c',
      'exit 3'
    ]
    expect((await cli(args)).status).toBe(3)
  })
})

describe('change, heartbeat, events: recording alone', () => {
  it.each(WHEN_RECORDING)('change under %s, %j: exit %i', async (mode, fault, exit) => {
    emulator.inject('POST /v2/change', fault)
    expect((await cli(['change', '--fail-on-error', mode])).status).toBe(exit)
  })

  it('exits 2 for an input error, but 0 under false, with the warning', async () => {
    expect((await cli(['heartbeat'])).status).toBe(2)
    const lenient = await cli(['heartbeat', '--fail-on-error', 'false'])
    expect(lenient.status).toBe(0)
    expect(lenient.stderr).toMatch(/^warning: --heartbeat-id is required/m)
  })
})

describe('the read commands', () => {
  it.each(['auto', 'true', 'false'])(
    'fail on any error under %s, and never say they do not',
    async mode => {
      emulator.inject('GET /v2/hello', OUTAGE)
      const { status, stderr } = await cli(['hello', '--fail-on-error', mode])
      expect(status).toBe(1)
      expect(stderr).not.toMatch(/not counted|not failing/i)
      expect((await cli(['get-change', '--fail-on-error', mode])).status).toBe(2)
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
      expect.arrayContaining(['Usage: change-tracking [options] [command]', 'Commands:'])
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
      { stdout: text => (stdout += String(text)), stderr: () => {}, cwd: work }
    )
    expect(status).toBe(0)
    const [deployed, json, end] = stdout.split('\n')
    expect(deployed).toBe('x')
    expect(JSON.parse(json)).toMatchObject({ 'change-id': expect.any(String) })
    expect(end).toBe('')
  })
})
