/**
 * `record-at: job-end`'s main step, in process against the emulator: the key check, the state it
 * saves for the post step, and what it says; a failure is deferred by the run (see main.ts).
 */
import { describe, expect, it } from '@jest/globals'
import { tmpdir } from 'node:os'
import type { Emulator } from '../../emulator/emulator.ts'
import { readJobEndState } from '../../src/action/post-state.ts'
import { run, runPost } from '../../src/main.ts'
import { useEmulator } from '../support/use-emulator.ts'
import { FakeRunner } from '../support/fake-runner.ts'
import { runnerContext } from '../support/run-action.ts'

let emulator: Emulator
useEmulator(started => (emulator = started))

async function mainStep(inputs: Record<string, string> = {}): Promise<FakeRunner> {
  const runner = new FakeRunner({
    'api-key': emulator.apiKey,
    'base-url': emulator.url,
    'max-attempts': '1',
    'record-at': 'job-end',
    ...inputs
  })
  await run(runner, runnerContext(tmpdir()))
  return runner
}

describe('the main step of a job-end run', () => {
  it('checks the key, saves its start and records nothing', async () => {
    const before = Date.now()
    const runner = await mainStep()
    expect(emulator.requests.map(r => `${r.method} ${r.rawPath}`)).toEqual(['GET /v2/hello'])
    const { startedAt } = JSON.parse(runner.states['jobEnd']) as { startedAt: number }
    expect(startedAt).toBeGreaterThanOrEqual(before)
    expect(Object.keys(JSON.parse(runner.states['jobEnd']) as object)).toEqual(['startedAt'])
    expect(runner.lines).toContain(
      'The change will be recorded when the job ends, with how the deploy ended (record-at: job-end).'
    )
    expect(runner.outputs['change-id']).toBeUndefined()
    expect(runner.failures).toEqual([])
  })

  it('says what a heartbeat run will do', async () => {
    const runner = await mainStep({ command: 'heartbeat', 'heartbeat-id': 'nightly' })
    expect(runner.lines).toContain(
      'The heartbeat will be sent when the job ends, if it succeeds (record-at: job-end).'
    )
  })

  it('under auto, a rejected key is an error annotation, the state is still saved, and the step does not fail', async () => {
    const runner = await mainStep({ 'api-key': 'not-the-key' })
    expect(runner.failures).toEqual([])
    expect(runner.errors).toEqual([expect.stringMatching(/the job will fail when it ends/)])
    expect(runner.states['jobEnd']).toBeDefined()
  })

  it('under auto, an outage at the key check is a warning that the post step will still record, and the state is saved', async () => {
    emulator.inject('GET /v2/hello', { status: 503, body: 'down' }, Infinity)
    const runner = await mainStep()
    expect(runner.failures).toEqual([])
    expect(runner.errors).toEqual([])
    expect(runner.warnings).toEqual([
      expect.stringMatching(/the post step will still try to record/)
    ])
    expect(runner.states['jobEnd']).toBeDefined()
  })

  it('in a dry run, sends nothing and still saves its start for the post step', async () => {
    const runner = await mainStep({ 'dry-run': 'true' })
    expect(emulator.requests).toHaveLength(0)
    expect(runner.states['jobEnd']).toBeDefined()
    expect(runner.lines).toContain('Dry run: nothing was sent.')
  })
})

describe('a job-end run with an invalid input under fail-on-error false', () => {
  it('lets the post step say once, at the job’s end, that the deploy was not recorded and why', async () => {
    const inputs = { 'fail-on-error': 'false', 'max-attempts': '11' }
    const main = await mainStep(inputs)
    expect(main.warnings).toEqual([
      expect.stringMatching(/max-attempts.*it will not be recorded \(fail-on-error: false\)\.$/)
    ])
    const jobEnd = readJobEndState({ STATE_jobEnd: main.states['jobEnd'] })
    expect(jobEnd).toBeDefined()
    const post = new FakeRunner({
      'api-key': emulator.apiKey,
      'base-url': emulator.url,
      'record-at': 'job-end',
      ...inputs
    })
    await runPost(jobEnd ?? {}, post, runnerContext(tmpdir()))
    expect(post.warnings).toEqual([
      'The deploy was not recorded: Input "max-attempts" must be a whole number from 1 to 10; got "11". (Not failing the step: fail-on-error is false.)'
    ])
    expect(post.failures).toEqual([])
    expect(emulator.requests).toHaveLength(0)
  })
})

describe('the main step of a run that records at once', () => {
  it('saves only that a post step is one, which then has nothing to do', async () => {
    const runner = await mainStep({ 'record-at': 'now', 'include-commits': 'false' })
    expect(runner.failures).toEqual([])
    expect(emulator.changes.size).toBe(1)
    expect(runner.states).toEqual({ isPost: 'true' })
  })
})
