/**
 * `record-at: job-end` as the runner runs it: the bundled action's main step before the deploy,
 * then its post step with the state the main step saved and the job's status; and a cancel, as
 * the runner's signals reach each step. What each step does by the failure policy's cells is
 * tested in process in action/policy.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { Emulator } from '../../emulator/emulator.ts'
import { testCertificate } from '../../emulator/tls.ts'
import { arrivalOf } from '../support/arrival.ts'
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

describe('cancellation while the post step records', () => {
  it('is reported as a cancellation, naming the change in flight', async () => {
    // The state a main step saves (its round trip: the first case above).
    const state = { isPost: 'true', jobEnd: JSON.stringify({ startedAt: Date.now() }) }
    emulator.inject('POST /v2/change', { hang: true }, Infinity)
    let signalledAt = 0
    const post = await action(
      { ...JOB_END, 'job-status': 'success', 'timeout-seconds': '30' },
      {
        state,
        onSpawn: child => {
          const spawnedAt = performance.now()
          // Once the change is in flight, however long the process took to start.
          void arrivalOf(emulator, 'POST /v2/change').then(() => {
            signalledAt = performance.now() - spawnedAt
            child.kill('SIGTERM')
          })
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
  it('during the key check ends the step at once, naming the check in flight, with 130', async () => {
    // The check waits for its 10 s: only the stop ends the step before the last-resort exit,
    // which would write no output.
    emulator.inject('GET /v2/hello', { hang: true }, Infinity)
    const run = await action(
      { ...JOB_END, 'timeout-seconds': '300' },
      {
        onSpawn: child => {
          void arrivalOf(emulator, 'GET /v2/hello').then(() => child.kill('SIGINT'))
        }
      }
    )
    expect(run.exitCode).toBe(130)
    expect(run.outputs['error']).toMatch(/cancelled \(SIGINT\).*GET \/v2\/hello was in flight/)
  })
})
