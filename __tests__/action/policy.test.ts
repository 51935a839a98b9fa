/**
 * The failure policy through the action's door, in process against the emulator: a job-end main
 * step (before the deploy) and a step that records, by mode, for a mistake and an outage.
 */
import { describe, expect, it } from '@jest/globals'
import { tmpdir } from 'node:os'
import type { Emulator, Fault } from '../../emulator/emulator.ts'
import { readJobEndState } from '../../src/action/post-state.ts'
import { run, runPost } from '../../src/main.ts'
import { FakeRunner } from '../support/fake-runner.ts'
import { runnerContext } from '../support/run-action.ts'
import { useEmulator } from '../support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => (emulator = started))

const ENV = { ...runnerContext(tmpdir()), GITHUB_EVENT_NAME: 'push' }
const MISTAKE: Fault = { status: 401 }
const OUTAGE: Fault = { status: 503 }
const runner = (inputs: Record<string, string>) =>
  new FakeRunner({
    'api-key': emulator.apiKey,
    'base-url': emulator.url,
    'max-attempts': '1',
    'include-commits': 'false',
    ...inputs
  })

/** How a step said its error: failed, an error annotation, a warning, or nothing. */
const said = (r: FakeRunner) =>
  r.failures.length
    ? 'fails'
    : r.errors.length
      ? 'error'
      : r.warnings.length
        ? 'warning'
        : 'nothing'

describe('record-at: job-end, an error at the key check before the deploy', () => {
  it.each([
    // mode, fault, how the main step says it, whether the post step records, how it ends
    ['auto', MISTAKE, 'error', false, 'fails'],
    ['true', MISTAKE, 'fails', false, 'nothing'],
    ['false', MISTAKE, 'warning', false, 'nothing'],
    ['auto', OUTAGE, 'warning', true, 'nothing'],
    ['true', OUTAGE, 'fails', false, 'nothing'],
    ['false', OUTAGE, 'warning', true, 'nothing']
  ] as const)(
    'under %s, %j: the main step %s; recorded at the end: %s; the post step %s',
    async (mode, fault, main, recorded, post) => {
      emulator.inject('GET /v2/hello', fault)
      // The key itself is what a 401 rejects: the post step meets it again.
      if (fault === MISTAKE) emulator.inject('POST /v2/change', fault)
      const inputs = { 'record-at': 'job-end', 'fail-on-error': mode }
      const first = runner(inputs)
      await run(first, ENV)
      expect(said(first)).toBe(main)
      const state = readJobEndState(
        Object.fromEntries(Object.entries(first.states).map(([k, v]) => [`STATE_${k}`, v]))
      )
      const last = runner(inputs)
      if (state) await runPost(state, last, ENV)
      expect(emulator.changes.size).toBe(recorded ? 1 : 0)
      expect(said(last) === 'fails' ? 'fails' : 'nothing').toBe(post)
    }
  )
})

describe('record-at: job-end, an invalid input', () => {
  const inputs = (mode: string) => ({
    'record-at': 'job-end',
    'fail-on-error': mode,
    'timeout-seconds': 'soon'
  })

  it('under auto: the main step says the job will fail, and the post step fails naming the input', async () => {
    const first = runner(inputs('auto'))
    await run(first, ENV)
    expect(said(first)).toBe('error')
    expect(first.errors).toEqual([
      expect.stringMatching(/timeout-seconds.*the job will fail when it ends/)
    ])
    const state = readJobEndState({ STATE_jobEnd: first.states['jobEnd'] })
    expect(state).toBeDefined()
    const last = runner(inputs('auto'))
    await runPost(state ?? {}, last, ENV)
    expect(last.failures).toEqual([
      expect.stringMatching(/^The deploy was not recorded: .*timeout-seconds/)
    ])
    expect(emulator.requests).toHaveLength(0)
  })

  it.each([
    ['false', 'warning', /timeout-seconds.*it will not be recorded/],
    ['true', 'fails', /timeout-seconds/]
  ] as const)(
    'under %s: the main step says it as a %s, and leaves the post step nothing to do',
    async (mode, how, saying) => {
      const first = runner(inputs(mode))
      await run(first, ENV)
      expect(said(first)).toBe(how)
      expect([...first.failures, ...first.warnings]).toEqual([expect.stringMatching(saying)])
      expect(first.states['jobEnd']).toBeUndefined()
      expect(emulator.requests).toHaveLength(0)
    }
  )
})

describe('a step that records', () => {
  it.each([
    ['auto', MISTAKE, 'fails'],
    ['true', MISTAKE, 'fails'],
    ['false', MISTAKE, 'warning'],
    ['auto', OUTAGE, 'warning'],
    ['true', OUTAGE, 'fails'],
    ['false', OUTAGE, 'warning']
  ] as const)('under %s, %j: %s', async (mode, fault, outcome) => {
    emulator.inject('POST /v2/change', fault)
    const r = runner({ 'fail-on-error': mode })
    await run(r, ENV)
    expect(said(r)).toBe(outcome)
  })

  it('a read fails on an outage even under false: its answer is what was asked for', async () => {
    emulator.inject('GET /v2/hello', OUTAGE)
    const r = runner({ command: 'hello', 'fail-on-error': 'false' })
    await run(r, ENV)
    expect(said(r)).toBe('fails')
  })
})
