/**
 * The failure policy as the action applies it, in process against the emulator through its main
 * step (`run`) and its post step (`runPost`): for each cell of the table (policy.test.ts), what
 * the step says and in which words, the exit status it sets, what runs after it and what is
 * recorded. A cancel is a signal the step receives as the runner sends it.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals'
import { tmpdir } from 'node:os'
import type { Emulator } from '../../emulator/emulator.ts'
import { readJobEndState } from '../../src/action/post-state.ts'
import { ACTION_WORDS, run, runPost } from '../../src/main.ts'
import type { Trouble } from '../../src/policy.ts'
import { arrivalOf } from '../support/arrival.ts'
import { FakeRunner } from '../support/fake-runner.ts'
import { runnerContext } from '../support/run-action.ts'
import { useEmulator } from '../support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})
afterEach(() => {
  process.exitCode = 0
  jest.restoreAllMocks()
})

const ENV = { ...runnerContext(tmpdir()), GITHUB_EVENT_NAME: 'push' }
const { beforeDeploy, notFailing } = ACTION_WORDS
const runner = (inputs: Record<string, string>) =>
  new FakeRunner({
    'api-key': emulator.apiKey,
    'base-url': emulator.url,
    'max-attempts': '1',
    'include-commits': 'false',
    ...inputs
  })

/** How a step said what went wrong: the failure line, an error annotation, a warning. */
type Said = 'a failure' | 'an error annotation' | 'a warning' | 'nothing'

/** What a step said (its one line, and as what) and the exit status it set. */
function ended(r: FakeRunner): { said: Said; line?: string; exit: number } {
  const exit = Number(process.exitCode ?? 0)
  process.exitCode = 0
  const lines = { failures: r.failures, errors: r.errors, warnings: r.warnings }
  const [line, ...more] = [...r.failures, ...r.errors, ...r.warnings]
  expect(more).toEqual([])
  if (lines.failures.length > 0) return { said: 'a failure', line, exit }
  if (lines.errors.length > 0) return { said: 'an error annotation', line, exit }
  if (lines.warnings.length > 0) return { said: 'a warning', line, exit }
  return { said: 'nothing', exit }
}

/** Inputs and faults that make each trouble happen, at the key check or when recording. */
function cause(trouble: Trouble, at: 'GET /v2/hello' | 'POST /v2/change'): Record<string, string> {
  if (trouble === 'input') return { 'timeout-seconds': 'soon' }
  // The key itself is what the service rejects: every step meets it.
  if (trouble === 'mistake') return { 'api-key': 'not-the-key' }
  emulator.inject(at, { status: 503 })
  return {}
}

/** The post step never runs: the main step saved no start for it. */
const NEVER_RUNS = 'nothing: it never runs'

// prettier-ignore
const BEFORE_DEPLOY = [
  // trouble   mode     the main step says      in these words                 exit  then the post step says  exit  recorded
  ['input',   'auto',  'an error annotation',  beforeDeploy.failsAfterDeploy,   0,    'a failure',             1,    false],
  ['input',   'true',  'a failure',            beforeDeploy.failsNow,           1,    NEVER_RUNS,              0,    false],
  ['input',   'false', 'a warning',            beforeDeploy.warns,              0,    'a warning',             0,    false],
  ['mistake', 'auto',  'an error annotation',  beforeDeploy.failsAfterDeploy,   0,    'a failure',             1,    false],
  ['mistake', 'true',  'a failure',            beforeDeploy.failsNow,           1,    NEVER_RUNS,              0,    false],
  ['mistake', 'false', 'a warning',            beforeDeploy.warns,              0,    'a warning',             0,    false],
  ['outage',  'auto',  'a warning',            beforeDeploy.recordsAfterDeploy, 0,    'nothing',               0,    true],
  ['outage',  'true',  'a failure',            beforeDeploy.failsNow,           1,    NEVER_RUNS,              0,    false],
  ['outage',  'false', 'a warning',            beforeDeploy.recordsAfterDeploy, 0,    'nothing',               0,    true]
] as const

describe('record-at: job-end: an error at the key check, before the deploy', () => {
  it.each(BEFORE_DEPLOY)(
    '%s, under %s: the main step says %s ("%s") and exits %i; the post step says %s and exits %i; recorded: %s',
    async (trouble, mode, mainSaid, words, mainExit, postSaid, postExit, recorded) => {
      const inputs = {
        'record-at': 'job-end',
        'fail-on-error': mode,
        ...cause(trouble, 'GET /v2/hello')
      }
      const first = runner(inputs)
      await run(first, ENV)
      const main = ended(first)
      expect(main).toMatchObject({ said: mainSaid, exit: mainExit })
      expect(main.line?.endsWith(` ${words}`)).toBe(true)
      const state = readJobEndState({ STATE_jobEnd: first.states['jobEnd'] })
      if (postSaid === NEVER_RUNS) {
        expect(state).toBeUndefined()
      } else {
        const last = runner(inputs)
        await runPost(state ?? {}, last, ENV)
        expect(ended(last)).toMatchObject({ said: postSaid, exit: postExit })
      }
      expect(emulator.changes.size).toBe(recorded ? 1 : 0)
    }
  )

  it.each([
    ['auto', 'a warning'],
    ['true', 'a failure'],
    ['false', 'a warning']
  ] as const)(
    'a cancel under %s: the main step stops the check at once, says %s naming it, and exits 130',
    async (mode, said) => {
      jest.spyOn(process, 'exit').mockImplementation(() => undefined as never)
      emulator.inject('GET /v2/hello', { hang: true })
      void arrivalOf(emulator, 'GET /v2/hello').then(() => process.emit('SIGINT', 'SIGINT'))
      const first = runner({
        'record-at': 'job-end',
        'fail-on-error': mode,
        'timeout-seconds': '300'
      })
      await run(first, ENV)
      expect(ended(first)).toEqual({
        said,
        line: 'The run was cancelled (SIGINT) before it finished. GET /v2/hello was in flight.',
        exit: 130
      })
    }
  )
})

// prettier-ignore
const RECORDING = [
  // trouble      mode     says          in these words          exit  recorded
  ['input',      'auto',  'a failure',  '',                     1,    false],
  ['input',      'true',  'a failure',  '',                     1,    false],
  ['input',      'false', 'a warning',  notFailing.false,       0,    false],
  ['mistake',    'auto',  'a failure',  '',                     1,    false],
  ['mistake',    'true',  'a failure',  '',                     1,    false],
  ['mistake',    'false', 'a warning',  notFailing.false,       0,    false],
  ['outage',     'auto',  'a warning',  notFailing.outage,      0,    false],
  ['outage',     'true',  'a failure',  '',                     1,    false],
  ['outage',     'false', 'a warning',  notFailing.false,       0,    false],
  ['unreported', 'auto',  'a warning',  notFailing.unreported,  0,    true],
  ['unreported', 'true',  'a failure',  '',                     1,    true],
  ['unreported', 'false', 'a warning',  notFailing.false,       0,    true]
] as const

describe('a step that records', () => {
  /** A runner that cannot write the change-id output: a failure to report. */
  function refusingOutput(r: FakeRunner): FakeRunner {
    const setOutput = r.setOutput.bind(r)
    r.setOutput = (name, value) => {
      if (name === 'change-id') throw new Error('Missing file at path: /tmp/out')
      setOutput(name, value)
    }
    return r
  }

  it.each(RECORDING)(
    '%s, under %s: says %s ("%s"), exits %i; recorded: %s',
    async (trouble, mode, said, words, exit, recorded) => {
      const fault = trouble !== 'unreported' && cause(trouble, 'POST /v2/change')
      const r = runner({ 'fail-on-error': mode, ...fault })
      if (trouble === 'unreported') refusingOutput(r)
      await run(r, ENV)
      const step = ended(r)
      expect(step).toMatchObject({ said, exit })
      if (words) expect(step.line?.endsWith(`. ${words}`)).toBe(true)
      else expect(step.line).not.toMatch(/Not failing/)
      expect(emulator.changes.size).toBe(recorded ? 1 : 0)
    }
  )

  it('says outputs that cannot be written once, in plain words, redacted', async () => {
    const r = runner({})
    r.setOutput = () => {
      throw new Error(`Missing file at path: /tmp/out-${emulator.apiKey}`)
    }
    await run(r, ENV)
    expect(r.warnings).toEqual([
      `The change-id output could not be written: Missing file at path: /tmp/out-***. Check the runner's disk and its GITHUB_OUTPUT file. ${notFailing.unreported}`
    ])
  })

  it.each([
    ['auto', 'a warning'],
    ['true', 'a failure'],
    ['false', 'a warning']
  ] as const)(
    'a cancel (SIGTERM) under %s: stops the change in flight at once, says %s naming it, and exits 143',
    async (mode, said) => {
      jest.spyOn(process, 'exit').mockImplementation(() => undefined as never)
      emulator.inject('POST /v2/change', { hang: true })
      void arrivalOf(emulator, 'POST /v2/change').then(() => process.emit('SIGTERM', 'SIGTERM'))
      const r = runner({ 'fail-on-error': mode, 'timeout-seconds': '300' })
      await run(r, ENV)
      expect(ended(r)).toEqual({
        said,
        line: 'The run was cancelled (SIGTERM) before it finished. A change (POST /v2/change) was in flight, so it may already have been recorded.',
        exit: 143
      })
      expect(r.summary).toMatch(/^## Cancelled\n/)
    }
  )
})

// prettier-ignore
const READING = [
  // trouble   mode
  ['input',   'auto'],
  ['input',   'true'],
  ['input',   'false'],
  ['mistake', 'auto'],
  ['mistake', 'true'],
  ['mistake', 'false'],
  ['outage',  'auto'],
  ['outage',  'true'],
  ['outage',  'false']
] as const

describe('a read', () => {
  it.each(READING)(
    'fails on %s, under %s, and exits 1: its answer is what was asked for',
    async (trouble, mode) => {
      // get-change without its id is an input error; hello meets the key or the outage.
      const command = trouble === 'input' ? { command: 'get-change' } : { command: 'hello' }
      const fault = trouble !== 'input' && cause(trouble, 'GET /v2/hello')
      const r = runner({ ...command, 'fail-on-error': mode, ...fault })
      await run(r, ENV)
      const step = ended(r)
      expect(step).toMatchObject({ said: 'a failure', exit: 1 })
      expect(step.line).not.toMatch(/Not failing/)
    }
  )
})
