/**
 * `record-at: job-end` as the runner runs it: the bundled action's main step before the deploy,
 * then its post step with the state the main step saved and the job's status.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { Emulator } from '../../emulator/emulator.ts'
import { testCertificate } from '../../emulator/tls.ts'
import { actionAgainst, TEST_GITHUB_TOKEN, type ActionRun } from '../support/run-action.ts'

let emulator: Emulator
let action: ReturnType<typeof actionAgainst>

beforeAll(async () => {
  emulator = await Emulator.start()
  action = actionAgainst(emulator, (await testCertificate()).certPath)
})
afterAll(async () => {
  await emulator.close()
})
beforeEach(() => emulator.reset())

const JOB_END = { 'record-at': 'job-end', 'max-attempts': '1' }

/** The main step, then the post step with its state and the job's status. */
async function job(
  inputs: Record<string, string>,
  jobStatus: string
): Promise<{ main: ActionRun; post: ActionRun }> {
  const main = await action({ ...JOB_END, ...inputs })
  const post = await action(
    { ...JOB_END, ...inputs, 'job-status': jobStatus },
    { state: main.state }
  )
  return { main, post }
}

function changesRecorded(): Array<Record<string, unknown>> {
  return [...emulator.changes.values()] as unknown as Array<Record<string, unknown>>
}

function deployOf(change: Record<string, unknown>): Record<string, unknown> {
  return (JSON.parse(String(change['custom_metadata'])) as { deploy: Record<string, unknown> })
    .deploy
}

describe('a job that succeeds', () => {
  it('records exactly one change, at the post step, created at the main step’s start, and saves no secret', async () => {
    const { main, post } = await job({}, 'success')
    expect(main.exitCode).toBe(0)
    expect(main.outputs['change-id']).toBeUndefined()
    expect(main.stdout).toContain('The change will be recorded when the job ends')
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(1)
    expect(emulator.requestsTo('GET /v2/hello')).toHaveLength(1)
    expect(post.exitCode).toBe(0)
    const [change] = changesRecorded()
    expect(changesRecorded()).toHaveLength(1)
    const startedAt = (JSON.parse(main.state['jobEnd']) as { startedAt: number }).startedAt
    expect(change['created_at']).toBe(Math.floor(startedAt / 1000))
    expect(deployOf(change)).toMatchObject({
      outcome: 'success',
      started_at: new Date(startedAt).toISOString()
    })
    expect(post.outputs['change-id']).toBe(Object.keys(Object.fromEntries(emulator.changes))[0])
    expect(post.summary).toContain('| Outcome | success |')
    // No secret in the state it saves.
    const saved = JSON.stringify(main.state)
    expect(Object.keys(main.state).sort()).toEqual(['isPost', 'jobEnd'])
    expect(saved).not.toContain(emulator.apiKey)
    expect(saved).not.toContain(TEST_GITHUB_TOKEN)
  })
})

describe('failures', () => {
  it('a rejected key under auto lets the deploy run, and fails the job at its end', async () => {
    const { main, post } = await job({ 'api-key': 'not-the-key' }, 'success')
    expect(main.exitCode).toBe(0)
    expect(main.stdout).toMatch(
      /::error::.*GET \/v2\/hello.*The deploy goes on, and the job will fail when it ends/
    )
    expect(post.exitCode).toBe(1)
    expect(post.stdout).toMatch(/::error::.*POST \/v2\/change.*401/)
    expect(emulator.changes.size).toBe(0)
  })

  it('a rejected key under true fails the main step, and the post step does nothing', async () => {
    const { main, post } = await job(
      { 'api-key': 'not-the-key', 'fail-on-error': 'true' },
      'success'
    )
    expect(main.exitCode).toBe(1)
    expect(main.state['jobEnd']).toBeUndefined()
    expect(post.exitCode).toBe(0)
    expect(post.stdout).toBe('')
  })

  it('a rejected key under false warns that the deploy will not be recorded, and the post step does nothing: no request, no line, no summary', async () => {
    const { main, post } = await job(
      { 'api-key': 'not-the-key', 'fail-on-error': 'false' },
      'success'
    )
    expect(main.exitCode).toBe(0)
    expect(main.stdout).toMatch(
      /::warning::.*401.*it will not be recorded \(fail-on-error: false\)/
    )
    expect(main.state['jobEnd']).toBeUndefined()
    expect(post.exitCode).toBe(0)
    expect(post.stdout).toBe('')
    // As after a run that recorded at once: no request, no line, no summary.
    expect(post.summary).toBe('')
    expect(emulator.requests.map(r => `${r.method} ${r.rawPath}`)).toEqual(['GET /v2/hello'])
  })
})

describe('cancellation while the post step records', () => {
  it('is reported as a cancellation, naming the change in flight', async () => {
    // The state a main step saves (its round trip: the first case above).
    const state = { isPost: 'true', jobEnd: JSON.stringify({ startedAt: Date.now() }) }
    emulator.inject('POST /v2/change', { hang: true }, Infinity)
    let spawnedAt = 0
    let signalledAt = 0
    const post = await action(
      { ...JOB_END, 'job-status': 'success', 'timeout-seconds': '30' },
      {
        state,
        onSpawn: child => {
          spawnedAt = performance.now()
          // Once the change is in flight, however long the process took to start.
          const poll = setInterval(() => {
            if (emulator.requestsTo('POST /v2/change').length === 0) return
            clearInterval(poll)
            signalledAt = performance.now() - spawnedAt
            child.kill('SIGTERM')
          }, 20)
          child.on('exit', () => clearInterval(poll))
        }
      }
    )
    expect(signalledAt).toBeGreaterThan(0)
    expect(post.exitCode).toBe(143)
    expect(post.exitAtMs - signalledAt).toBeLessThan(1000)
    expect(post.outputs['error']).toMatch(
      /cancelled \(SIGTERM\).*A change \(POST \/v2\/change\) was in flight/
    )
    expect(post.summary).toMatch(/Cancelled/)
  })
})

describe('a cancel (SIGINT, as the runner sends first)', () => {
  async function interrupted(
    inputs: Record<string, string>,
    state: Record<string, string> | undefined,
    route: string
  ) {
    emulator.inject(route, { hang: true }, Infinity)
    let signalledAt = 0
    const run = await action(inputs, {
      ...(state && { state }),
      onSpawn: child => {
        const started = performance.now()
        const poll = setInterval(() => {
          if (emulator.requestsTo(route).length > 0) {
            clearInterval(poll)
            signalledAt = performance.now() - started
            child.kill('SIGINT')
            // As the runner does: SIGTERM 7.5 s after SIGINT, if the step is still running.
            const term = setTimeout(() => child.kill('SIGTERM'), 7500)
            child.on('exit', () => clearTimeout(term))
          }
        }, 10)
      }
    })
    return { run, signalledAt }
  }

  it('during the key check exits at once, naming the key check in flight', async () => {
    const { run, signalledAt } = await interrupted({ ...JOB_END }, undefined, 'GET /v2/hello')
    expect(run.exitCode).toBe(130)
    expect(run.exitAtMs - signalledAt).toBeLessThan(2000)
    expect(run.outputs['error']).toMatch(/cancelled \(SIGINT\).*GET \/v2\/hello was in flight/)
  })
})
