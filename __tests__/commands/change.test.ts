/**
 * The change and heartbeat commands against the emulator, through no door: what is recorded, and
 * after a deploy how its outcome shapes it.
 */
import { beforeEach, describe, expect, it } from '@jest/globals'
import { tmpdir } from 'node:os'
import type { Emulator } from '../../emulator/emulator.ts'
import type { RunDefaults } from '../../src/change.ts'
import { recordChange, sendHeartbeat } from '../../src/commands/change.ts'
import type { DeployRecord } from '../../src/deploy.ts'
import { finish, NOW, runCommandWith, type ContextOptions } from '../support/command-context.ts'
import { renderSummary } from '../support/summary.ts'
import { useEmulator } from '../support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})
beforeEach(() => emulator.addHeartbeatMonitor('nightly'))

const VERSION = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678'
const RUN_URL = 'https://github.com/octo-org/octo-repo/actions/runs/9876543210/attempts/2'
/** A run as a door gives it: a push to main, re-run once. */
const RUN: RunDefaults = {
  service: 'octo-org/octo-repo',
  version: VERSION,
  eventDescription: 'Deploy a1b2c3d on main of octo-org/octo-repo',
  metadata: { key: 'github', fields: { repository: 'octo-org/octo-repo', sha: VERSION } },
  links: { serverUrl: 'https://github.com', repository: 'octo-org/octo-repo' },
  runLink: { text: 'Run 42 attempt 2', url: RUN_URL },
  workspace: tmpdir()
}

/** The command's run against the emulator, its outputs and summary written. */
async function command(
  given: Record<string, string> = {},
  {
    run = RUN,
    handler = recordChange,
    ...options
  }: ContextOptions & {
    run?: RunDefaults
    handler?: typeof recordChange
  } = {}
) {
  const inputs = {
    'api-key': emulator.apiKey,
    'base-url': emulator.url,
    'max-attempts': '1',
    ...given
  }
  const ran = await runCommandWith(inputs, run, handler, options)
  await finish(ran)
  return ran
}

/** A deploy that ended this way after 30 s. */
function deployed(outcome: DeployRecord['outcome'], status: string = outcome): DeployRecord {
  return { outcome, status, startedAt: NOW - 30_000, finishedAt: NOW }
}

/** The custom_metadata of the one change recorded. */
function recordedMetadata(): Record<string, Record<string, unknown>> {
  const [change] = emulator.changes.values()
  return JSON.parse(String(change?.custom_metadata))
}

describe('a push that deleted its branch or tag', () => {
  const deleted: RunDefaults = { ...RUN, version: undefined, deletedRef: true }

  it('records nothing, says so once, and does not fail', async () => {
    const { result, error, recorder } = await command({}, { run: deleted })
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(0)
    expect(error).toBeUndefined()
    expect(result?.title.done).toEqual({ subject: 'No change recorded' })
    expect(recorder.notices).toEqual([
      'No change recorded: this push deleted a branch or tag, so nothing was deployed.'
    ])
    expect(recorder.failures).toEqual([])
    expect(recorder.summary).toContain('No change recorded')
  })

  it('still records the version the user names', async () => {
    const { error } = await command({ version: 'v1.2.3' }, { run: deleted })
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(1)
    expect(error).toBeUndefined()
  })
})

describe('a change', () => {
  it("links the run by the run's own words, and keeps every cell short", async () => {
    const { recorder } = await command({ 'heartbeat-id': 'nightly' })
    const { title, links, cells } = renderSummary(recorder.summary)
    expect(title).toBe('Change recorded')
    expect(links).toEqual([{ text: 'Run 42 attempt 2', href: RUN_URL }])
    expect(Math.max(...cells.map(cell => cell.length))).toBeLessThanOrEqual(100)
  })

  it('in an outage, shows what would have been recorded, says it was not, and that the heartbeat was not attempted', async () => {
    emulator.inject('POST /v2/change', { status: 503, body: 'down' }, Infinity)
    const { result, recorder } = await command({
      'heartbeat-id': 'nightly',
      environment: 'production'
    })
    expect(result?.title.notDone?.what).toBe('Change not recorded')
    expect(recorder.failures).toEqual([])
    expect(emulator.requestsTo('POST /v1/heartbeat/nightly')).toHaveLength(0)
    const { title, blocks, cells } = renderSummary(recorder.summary)
    expect(title).toBe('Change not recorded: the service was unavailable')
    expect(blocks).toContain('Change not recorded')
    expect(cells).toEqual(
      expect.arrayContaining([
        'Service',
        'octo-org/octo-repo',
        'Version',
        VERSION,
        'Environment',
        'production'
      ])
    )
    expect(cells).not.toContain('Id')
    expect(blocks).toContain('Heartbeat not sent: recording failed, so it was not attempted.')
  })
})

describe('after a deploy', () => {
  it.each(['failure', 'cancelled'] as const)(
    'sends no heartbeat when the deploy ended with %s',
    async outcome => {
      const { recorder } = await command(
        { 'heartbeat-id': 'nightly' },
        { deploy: deployed(outcome) }
      )
      expect(emulator.requestsTo('POST /v1/heartbeat/nightly')).toHaveLength(0)
      expect(emulator.requestsTo('POST /v2/change')).toHaveLength(1)
      expect(recorder.lines).toContain(`Heartbeat not sent: the deploy ended with ${outcome}.`)
      const { title, blocks } = renderSummary(recorder.summary)
      const ended = outcome === 'failure' ? 'failed' : 'cancelled'
      expect(title).toBe(`Deploy ${ended} after 30 s: change recorded`)
      expect(blocks[0]).toBe('Triage')
      expect(blocks).toContain(`Heartbeat not sent: the deploy ended with ${outcome}.`)
    }
  )

  it('sends the heartbeat after the change when the job succeeded, and shows the deploy', async () => {
    const { recorder } = await command(
      { 'heartbeat-id': 'nightly' },
      { deploy: deployed('success') }
    )
    expect(emulator.requestsTo('POST /v1/heartbeat/nightly')).toHaveLength(1)
    expect(recorder.outputs['heartbeat-signal-id']).toMatch(/\S/)
    expect(recorder.summary).toMatch(/\| Outcome \| success \|/)
  })

  it('records a failed deploy as failed whatever the labels and metadata claim, warning once', async () => {
    const { recorder } = await command(
      {
        labels: 'outcome:success',
        'custom-metadata': '{"deploy":{"outcome":"success","ticket":"OPS-1"}}'
      },
      { deploy: deployed('failure') }
    )
    const [change] = emulator.changes.values()
    expect(change?.labels).toBe('outcome:failure')
    expect(recordedMetadata().deploy).toMatchObject({
      outcome: 'failure',
      status: 'failure',
      ticket: 'OPS-1'
    })
    expect(recorder.warnings).toEqual([
      'The deploy ended with failure, so the change keeps outcome failure: the label "outcome:success" was dropped; custom-metadata\'s deploy.outcome "success" was replaced.'
    ])
  })

  it.each([
    ['failure', 'failure', / failed after 30 s$/],
    ['cancelled', 'cancelled', / cancelled after 30 s$/],
    ['unknown', 'skipped', / ended with an unknown status after 30 s$/]
  ] as const)(
    'records a deploy that ended with %s (status %s) in the metadata and the description',
    async (outcome, status, described) => {
      const { error } = await command({}, { deploy: deployed(outcome, status) })
      expect(error).toBeUndefined()
      expect(recordedMetadata().deploy).toMatchObject({ outcome, status })
      const [change] = emulator.changes.values()
      expect(String(change?.description)).toMatch(described)
    }
  )

  it('records one change per service, each with the deploy’s outcome', async () => {
    const { error, recorder } = await command(
      { services: 'api: services/api/**\nweb' },
      { deploy: deployed('failure') }
    )
    expect(error).toBeUndefined()
    const changes = [...emulator.changes.values()]
    expect(changes.map(change => change.service).sort()).toEqual(['api', 'web'])
    for (const change of changes) {
      expect(JSON.parse(String(change.custom_metadata)).deploy['outcome']).toBe('failure')
    }
    expect(JSON.parse(recorder.outputs['change-ids'])).toHaveProperty('web')
  })

  it('in a dry run, prints the change it would send with the deploy’s outcome, and sends nothing', async () => {
    const { recorder } = await command({ 'dry-run': 'true' }, { deploy: deployed('success') })
    expect(emulator.requests).toHaveLength(0)
    const printed = recorder.lines.join('\n')
    expect(printed).toContain(`[dry-run] POST ${emulator.url}v2/change`)
    expect(printed).toContain('\\"outcome\\":\\"success\\"')
  })

  it('records a deploy without a known start with its outcome alone: no start, no duration', async () => {
    const { error } = await command(
      {},
      { deploy: { outcome: 'failure', status: 'failure', finishedAt: NOW } }
    )
    expect(error).toBeUndefined()
    const [request] = emulator.requestsTo('POST /v2/change')
    expect(JSON.parse(request.body)).not.toHaveProperty('created_at')
    expect(recordedMetadata().deploy).toEqual({
      outcome: 'failure',
      status: 'failure',
      finished_at: new Date(NOW).toISOString()
    })
    const [change] = emulator.changes.values()
    expect(String(change?.description)).toMatch(/ failed$/)
  })

  it('warns of an outage, and does not fail, with the failed call in the error output', async () => {
    emulator.inject('POST /v2/change', { status: 503, body: 'down' }, Infinity)
    const { error, recorder } = await command({}, { deploy: deployed('failure') })
    expect(error).toMatchObject({ kind: 'outage', call: 'POST /v2/change' })
    expect(recorder.failures).toEqual([])
    expect(recorder.warnings).toEqual([expect.stringContaining('POST /v2/change')])
    expect(recorder.outputs['error']).toMatch(/POST \/v2\/change/)
  })

  it('runs the heartbeat command alone the same way', async () => {
    const inputs = { command: 'heartbeat', 'heartbeat-id': 'nightly' }
    const failed = await command(inputs, { deploy: deployed('failure'), handler: sendHeartbeat })
    expect(emulator.requestsTo('POST /v1/heartbeat/nightly')).toHaveLength(0)
    expect(failed.result?.title.done).toEqual({ subject: 'Heartbeat not sent' })
    await command(inputs, { deploy: deployed('success'), handler: sendHeartbeat })
    expect(emulator.requestsTo('POST /v1/heartbeat/nightly')).toHaveLength(1)
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(0)
  })
})

describe('triage without a lookup', () => {
  it('reads the hotfix and the issue key from the pushed branch, says so in one line, and calls the risk unknown', async () => {
    const { recorder } = await command(
      { labels: 'team:shop' },
      { run: { ...RUN, branch: 'hotfix/ENG-9-login' } }
    )
    const [change] = emulator.changes.values()
    expect(change?.labels).toBe('team:shop,remediation:hotfix,issue:ENG-9')
    const metadata = recordedMetadata()
    expect(metadata.remediation).toEqual({ type: 'hotfix' })
    expect(metadata.github).toMatchObject({
      issues: ['ENG-9'],
      issues_complete: false,
      risk_complete: false
    })
    expect(recorder.lines).toContain('Triage: remediation hotfix; issues ENG-9.')
  })
})
