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
  it('records exactly one change, at the post step, created at the main step’s start', async () => {
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
  })

  it('keeps no secret in the state it saves', async () => {
    const main = await action({ ...JOB_END })
    const saved = JSON.stringify(main.state)
    expect(Object.keys(main.state).sort()).toEqual(['isPost', 'jobEnd'])
    expect(saved).not.toContain(emulator.apiKey)
    expect(saved).not.toContain(TEST_GITHUB_TOKEN)
  })
})

describe.each([
  ['failure', 'failure', /failed after \d+ s$/],
  ['cancelled', 'cancelled', /cancelled after \d+ s$/],
  ['an unexpected status', 'unknown', /ended with an unknown status after \d+ s$/]
])('a job that ends in %s', (_, outcome, described) => {
  it('is still recorded, with its outcome in the metadata and the description', async () => {
    const status = outcome === 'unknown' ? 'skipped' : outcome
    const { post } = await job({}, status)
    expect(post.exitCode).toBe(0)
    const [change] = changesRecorded()
    expect(deployOf(change)['outcome']).toBe(outcome)
    expect(String(change['description'])).toMatch(described)
  })
})

describe('heartbeats at the job’s end', () => {
  it('are sent when the job succeeded, and not otherwise', async () => {
    emulator.addHeartbeatMonitor('nightly')
    const inputs = { command: 'heartbeat', 'heartbeat-id': 'nightly' }
    const failed = await job(inputs, 'failure')
    expect(failed.post.exitCode).toBe(0)
    expect(emulator.heartbeats.get('nightly')).toEqual([])
    const succeeded = await job(inputs, 'success')
    expect(succeeded.post.exitCode).toBe(0)
    expect(emulator.heartbeats.get('nightly')).toHaveLength(1)
    expect(emulator.changes.size).toBe(0)
  })

  it('follow a change only when the job succeeded', async () => {
    emulator.addHeartbeatMonitor('deploys')
    await job({ 'heartbeat-id': 'deploys' }, 'failure')
    expect(emulator.changes.size).toBe(1)
    expect(emulator.heartbeats.get('deploys')).toEqual([])
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

  it('a rejected key under false warns that the deploy will not be recorded, and the post step does nothing', async () => {
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
  })

  it('an outage at the main step warns, and the post step still records', async () => {
    emulator.inject('GET /v2/hello', { status: 503, body: 'down' }, Infinity)
    const { main, post } = await job({}, 'success')
    expect(main.exitCode).toBe(0)
    expect(main.stdout).toMatch(/::warning::.*the post step will still try to record/)
    expect(post.exitCode).toBe(0)
    expect(emulator.changes.size).toBe(1)
  })

  it('an outage at the post step warns and exits 0', async () => {
    emulator.inject('POST /v2/change', { status: 503, body: 'down' }, Infinity)
    const { post } = await job({}, 'failure')
    expect(post.exitCode).toBe(0)
    expect(post.stdout).toMatch(/::warning::/)
    expect(post.outputs['error']).toMatch(/POST \/v2\/change/)
  })

  it('bad input under auto lets the deploy run, and fails the job at its end naming the input', async () => {
    const { main, post } = await job({ 'timeout-seconds': 'soon' }, 'success')
    expect(main.exitCode).toBe(0)
    expect(main.stdout).toMatch(/::error::.*timeout-seconds.*the job will fail when it ends/)
    expect(post.exitCode).toBe(1)
    expect(post.stdout).toMatch(/::error::The deploy was not recorded: .*timeout-seconds/)
    expect(emulator.requests).toHaveLength(0)
  })

  it('bad input under false says at the main step that the deploy will not be recorded, and the post step is silent', async () => {
    const { main, post } = await job(
      { 'timeout-seconds': 'soon', 'fail-on-error': 'false' },
      'success'
    )
    expect(main.exitCode).toBe(0)
    expect(main.stdout).toMatch(/::warning::.*timeout-seconds.*it will not be recorded/)
    expect(post.exitCode).toBe(0)
    expect(post.stdout).toBe('')
  })

  it('bad input under true fails the main step, and the post step is silent', async () => {
    const { main, post } = await job(
      { 'timeout-seconds': 'soon', 'fail-on-error': 'true' },
      'success'
    )
    expect(main.exitCode).toBe(1)
    expect(post.stdout).toBe('')
  })

  it('job-end with a command other than change or heartbeat is an input error', async () => {
    const main = await action({ ...JOB_END, command: 'hello', 'fail-on-error': 'true' })
    expect(main.exitCode).toBe(1)
    expect(main.stdout).toContain('record-at')
    expect(emulator.requests).toHaveLength(0)
  })
})

describe('a saved start the post step cannot use', () => {
  // Each way a saved start is refused: action/post-state.test.ts. Here, that the post step
  // still records the change, with one warning.
  it.each([['unreadable', 'not json', 'cannot be read']])(
    '%s: the change is still recorded with its outcome, without a start, and one warning',
    async (_, saved, problem) => {
      const post = await action(
        { ...JOB_END, 'job-status': 'failure' },
        { state: { isPost: 'true', jobEnd: saved } }
      )
      expect(post.exitCode).toBe(0)
      const warnings = post.stdout.split('\n').filter(line => line.startsWith('::warning::'))
      expect(warnings).toEqual([
        expect.stringMatching(
          new RegExp(
            `recorded without its start or duration: .*${problem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`
          )
        )
      ])
      const [change] = changesRecorded()
      expect(change['created_at']).toBeGreaterThan(Date.now() / 1000 - 60)
      expect(deployOf(change)).toEqual({
        outcome: 'failure',
        status: 'failure',
        finished_at: expect.any(String)
      })
      expect(String(change['description'])).toMatch(/ failed$/)
    }
  )
})

describe('cancellation while the post step records', () => {
  it('is reported as a cancellation, naming the change in flight', async () => {
    const main = await action({ ...JOB_END })
    emulator.inject('POST /v2/change', { hang: true }, Infinity)
    let spawnedAt = 0
    let signalledAt = 0
    const post = await action(
      { ...JOB_END, 'job-status': 'success', 'timeout-seconds': '30' },
      {
        state: main.state,
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

describe('record-at: now', () => {
  it('leaves the post step nothing to do: no request, no line, no summary', async () => {
    const main = await action({})
    expect(emulator.changes.size).toBe(1)
    emulator.reset()
    const post = await action({ 'job-status': 'failure' }, { state: main.state })
    expect(post.exitCode).toBe(0)
    expect(post.stdout).toBe('')
    expect(post.summary).toBe('')
    expect(emulator.requests).toHaveLength(0)
  })
})

describe('services at the job’s end', () => {
  it('records one change per service, each with the deploy’s outcome', async () => {
    const { post } = await job({ services: 'api: services/api/**\nweb' }, 'failure')
    expect(post.exitCode).toBe(0)
    const changes = changesRecorded()
    expect(changes.map(change => change['service']).sort()).toEqual(['api', 'web'])
    for (const change of changes) expect(deployOf(change)['outcome']).toBe('failure')
    expect(JSON.parse(post.outputs['change-ids'])).toHaveProperty('web')
  })
})

describe('dry run at the job’s end', () => {
  it('sends nothing at the main step, and prints at the post step what it would send', async () => {
    const { main, post } = await job({ 'dry-run': 'true' }, 'success')
    expect(main.stdout).toContain('Dry run: nothing was sent.')
    expect(post.stdout).toMatch(/POST https:\/\/[^ ]+\/v2\/change/)
    expect(post.stdout).toContain('\\"outcome\\":\\"success\\"')
    expect(emulator.requests).toHaveLength(0)
  })
})
