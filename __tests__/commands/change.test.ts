/**
 * The change and heartbeat commands, in process against the emulator: what is recorded, and at a
 * job's end how the deploy's outcome shapes it.
 */
import { beforeEach, describe, expect, it } from '@jest/globals'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Emulator } from '../../emulator/emulator.ts'
import { readJobEndState } from '../../src/action/post-state.ts'
import { run, runPost } from '../../src/main.ts'
import { useEmulator } from '../support/use-emulator.ts'
import { FakeRunner } from '../support/fake-runner.ts'
import { runnerContext } from '../support/run-action.ts'
import { renderSummary } from '../support/summary.ts'

let emulator: Emulator
useEmulator(started => (emulator = started))
beforeEach(() => emulator.addHeartbeatMonitor('nightly'))

function runner(inputs: Record<string, string> = {}): FakeRunner {
  return new FakeRunner({
    'api-key': emulator.apiKey,
    'base-url': emulator.url,
    'max-attempts': '1',
    'include-commits': 'false',
    ...inputs
  })
}

/** The runner's variables for a push event with this payload. */
function pushEnv(payload: Record<string, unknown>): Record<string, string> {
  const path = join(mkdtempSync(join(tmpdir(), 'cta-event-')), 'event.json')
  writeFileSync(path, JSON.stringify(payload))
  return { ...runnerContext(tmpdir()), GITHUB_EVENT_NAME: 'push', GITHUB_EVENT_PATH: path }
}

describe('a push that deleted its branch or tag', () => {
  const deleted = { ref: 'refs/heads/old', deleted: true, after: '0'.repeat(40) }

  it('records nothing, says so once, and does not fail', async () => {
    const r = runner()
    await run(r, { ...pushEnv(deleted), GITHUB_SHA: '0'.repeat(40) })
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(0)
    expect(r.failures).toEqual([])
    expect(r.notices).toEqual([
      'No change recorded: this push deleted a branch or tag, so nothing was deployed.'
    ])
    expect(r.summary).toContain('No change recorded')
  })

  it('still records the version the user names', async () => {
    const r = runner({ version: 'v1.2.3' })
    await run(r, pushEnv(deleted))
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(1)
    expect(r.failures).toEqual([])
  })
})

describe('a change', () => {
  it('links the run by its number, and keeps every cell short', async () => {
    const r = runner({ 'heartbeat-id': 'nightly' })
    await run(r, { ...runnerContext(tmpdir()), GITHUB_RUN_ATTEMPT: '2' })
    const { title, links, cells } = renderSummary(r.summary)
    expect(title).toBe('Change recorded')
    expect(links).toEqual([
      {
        text: 'Run 42 attempt 2',
        href: 'https://github.com/octo-org/octo-repo/actions/runs/9876543210/attempts/2'
      }
    ])
    expect(Math.max(...cells.map(cell => cell.length))).toBeLessThanOrEqual(100)
  })

  it('in an outage, shows what would have been recorded, says it was not, and that the heartbeat was not attempted', async () => {
    emulator.inject('POST /v2/change', { status: 503, body: 'down' }, Infinity)
    const r = runner({ 'heartbeat-id': 'nightly', environment: 'production' })
    await run(r, runnerContext(tmpdir()))
    expect(r.failures).toEqual([])
    expect(emulator.requestsTo('POST /v1/heartbeat/nightly')).toHaveLength(0)
    const { title, blocks, cells } = renderSummary(r.summary)
    expect(title).toBe('Change not recorded: the service was unavailable')
    expect(blocks).toContain('Change not recorded')
    expect(cells).toEqual(
      expect.arrayContaining([
        'Service',
        'octo-org/octo-repo',
        'Version',
        'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
        'Environment',
        'production'
      ])
    )
    expect(cells).not.toContain('Id')
    expect(blocks).toContain('Heartbeat not sent: recording failed, so it was not attempted.')
  })
})

describe('at a job’s end', () => {
  const startedAt = Date.now() - 30_000
  const post = (r: FakeRunner): Promise<void> => runPost({ startedAt }, r, runnerContext(tmpdir()))

  it.each(['failure', 'cancelled'])(
    'sends no heartbeat when the deploy ended with %s',
    async status => {
      const r = runner({ 'record-at': 'job-end', 'job-status': status, 'heartbeat-id': 'nightly' })
      await post(r)
      expect(emulator.requestsTo('POST /v1/heartbeat/nightly')).toHaveLength(0)
      expect(emulator.requestsTo('POST /v2/change')).toHaveLength(1)
      expect(r.lines).toContain(`Heartbeat not sent: the deploy ended with ${status}.`)
      const { title, blocks } = renderSummary(r.summary)
      const ended = status === 'failure' ? 'failed' : 'cancelled'
      expect(title).toMatch(new RegExp(`^Deploy ${ended} after \\d+ s: change recorded$`))
      expect(blocks[0]).toBe('Triage')
      expect(blocks).toContain(`Heartbeat not sent: the deploy ended with ${status}.`)
    }
  )

  it('sends the heartbeat after the change when the job succeeded, and shows the deploy', async () => {
    const r = runner({ 'record-at': 'job-end', 'job-status': 'success', 'heartbeat-id': 'nightly' })
    await post(r)
    expect(emulator.requestsTo('POST /v1/heartbeat/nightly')).toHaveLength(1)
    expect(r.outputs['heartbeat-signal-id']).toMatch(/\S/)
    expect(r.summary).toMatch(/\| Outcome \| success \|/)
  })

  it('records a failed deploy as failed whatever the labels and metadata claim, warning once', async () => {
    const r = runner({
      'record-at': 'job-end',
      'job-status': 'failure',
      labels: 'outcome:success',
      'custom-metadata': '{"deploy":{"outcome":"success","ticket":"OPS-1"}}'
    })
    await post(r)
    const [change] = emulator.changes.values()
    expect(change?.labels).toBe('outcome:failure')
    const { deploy } = JSON.parse(String(change?.custom_metadata))
    expect(deploy).toMatchObject({ outcome: 'failure', status: 'failure', ticket: 'OPS-1' })
    expect(r.warnings).toEqual([
      'The deploy ended with failure, so the change keeps outcome failure: the label "outcome:success" was dropped; custom-metadata\'s deploy.outcome "success" was replaced.'
    ])
  })

  it.each([
    ['failure', 'failure', / failed after \d+ s$/],
    ['cancelled', 'cancelled', / cancelled after \d+ s$/],
    ['skipped', 'unknown', / ended with an unknown status after \d+ s$/]
  ])(
    'records a deploy that ended with %s, its outcome %s in the metadata and the description',
    async (status, outcome, described) => {
      const r = runner({ 'record-at': 'job-end', 'job-status': status })
      await post(r)
      expect(r.failures).toEqual([])
      const [change] = emulator.changes.values()
      expect(JSON.parse(String(change?.custom_metadata)).deploy['outcome']).toBe(outcome)
      expect(String(change?.description)).toMatch(described)
    }
  )

  it('records one change per service, each with the deploy’s outcome', async () => {
    const r = runner({
      'record-at': 'job-end',
      'job-status': 'failure',
      services: 'api: services/api/**\nweb'
    })
    await post(r)
    expect(r.failures).toEqual([])
    const changes = [...emulator.changes.values()]
    expect(changes.map(change => change.service).sort()).toEqual(['api', 'web'])
    for (const change of changes) {
      expect(JSON.parse(String(change.custom_metadata)).deploy['outcome']).toBe('failure')
    }
    expect(JSON.parse(r.outputs['change-ids'])).toHaveProperty('web')
  })

  it('in a dry run, prints the change it would send with the deploy’s outcome, and sends nothing', async () => {
    const r = runner({ 'record-at': 'job-end', 'job-status': 'success', 'dry-run': 'true' })
    await post(r)
    expect(emulator.requests).toHaveLength(0)
    const printed = r.lines.join('\n')
    expect(printed).toContain(`[dry-run] POST ${emulator.url}v2/change`)
    expect(printed).toContain('\\"outcome\\":\\"success\\"')
  })

  it('records a start it cannot read as no start: the outcome alone, and one warning', async () => {
    const r = runner({ 'record-at': 'job-end', 'job-status': 'failure' })
    const saved = readJobEndState({ STATE_jobEnd: 'not json' })
    await runPost(saved ?? {}, r, runnerContext(tmpdir()))
    expect(r.failures).toEqual([])
    expect(r.warnings).toEqual([
      'The deploy is recorded without its start or duration: the start the main step saved cannot be read.'
    ])
    const [request] = emulator.requestsTo('POST /v2/change')
    expect(JSON.parse(request.body)).not.toHaveProperty('created_at')
    const [change] = emulator.changes.values()
    expect(JSON.parse(String(change?.custom_metadata)).deploy).toEqual({
      outcome: 'failure',
      status: 'failure',
      finished_at: expect.any(String)
    })
    expect(String(change?.description)).toMatch(/ failed$/)
  })

  it('warns of an outage, and does not fail the step, with the failed call in the error output', async () => {
    emulator.inject('POST /v2/change', { status: 503, body: 'down' }, Infinity)
    const r = runner({ 'record-at': 'job-end', 'job-status': 'failure' })
    await post(r)
    expect(r.failures).toEqual([])
    expect(r.warnings).toEqual([expect.stringContaining('POST /v2/change')])
    expect(r.outputs['error']).toMatch(/POST \/v2\/change/)
  })

  it('runs the heartbeat command alone the same way', async () => {
    const inputs = { command: 'heartbeat', 'record-at': 'job-end', 'heartbeat-id': 'nightly' }
    const failed = runner({ ...inputs, 'job-status': 'failure' })
    await post(failed)
    expect(emulator.requestsTo('POST /v1/heartbeat/nightly')).toHaveLength(0)
    await post(runner({ ...inputs, 'job-status': 'success' }))
    expect(emulator.requestsTo('POST /v1/heartbeat/nightly')).toHaveLength(1)
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(0)
  })
})

describe('triage without a lookup', () => {
  it('reads the hotfix and the issue key from the pushed branch, says so in one line, and calls the risk unknown', async () => {
    const r = runner({ labels: 'team:shop' })
    await run(r, {
      ...pushEnv({ ref: 'refs/heads/hotfix/ENG-9-login' }),
      GITHUB_REF: 'refs/heads/hotfix/ENG-9-login',
      GITHUB_REF_NAME: 'hotfix/ENG-9-login',
      GITHUB_REF_TYPE: 'branch'
    })
    const [change] = emulator.changes.values()
    expect(change?.labels).toBe('team:shop,remediation:hotfix,issue:ENG-9')
    const metadata = JSON.parse(String(change?.custom_metadata))
    expect(metadata.remediation).toEqual({ type: 'hotfix' })
    expect(metadata.github).toMatchObject({
      issues: ['ENG-9'],
      issues_complete: false,
      risk_complete: false
    })
    expect(r.lines).toContain('Triage: remediation hotfix; issues ENG-9.')
  })
})
