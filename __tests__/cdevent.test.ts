/**
 * The CDEvent of a recorded change, checked key by key against CDEvents 0.5.1's schemas of
 * service.deployed and service.rolledback (0.3.0): context, subject and content allow no other keys.
 */
import { describe, expect, it } from '@jest/globals'
import { CDEVENTS_SPEC_VERSION, cdEvent, type CdEvent } from '../src/cdevent.ts'
import type { ChangeBasis, RunDefaults } from '../src/change.ts'
import { ACTION_NAME } from '../src/package.ts'
import type { ChangeRequest } from '../src/service/client.ts'
import { emptyShipped } from '../src/shipped/types.ts'
import { parseArtifact } from '../src/values/artifact.ts'

const SHA = '3F786850E387550FDAB836ED7E6DC881DE23001B'
const RUN_URL = 'https://github.com/Acme/Shop/actions/runs/42'
const RUN: RunDefaults = {
  service: 'Acme/Shop',
  version: SHA,
  metadata: { key: 'github', fields: {} },
  workspace: '/work',
  pipeline: { repositoryUrl: 'https://github.com/Acme/Shop', provider: 'github', runUrl: RUN_URL }
}
const CHANGE: ChangeRequest = {
  description: 'Deploy',
  service: 'Acme/Shop',
  version: SHA,
  environment: 'production'
}
const FINISHED = Date.parse('2026-01-02T03:04:05.678Z')
const BASIS: ChangeBasis = {
  run: RUN,
  deploy: { outcome: 'success', status: 'success', finishedAt: FINISHED }
}
const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** The event, through JSON as a broker reads it, with each object's keys checked. */
function eventOf(...args: Parameters<typeof cdEvent>) {
  const made = cdEvent(...args)
  if (!('event' in made)) throw new Error(`no event: ${made.none}`)
  const event = JSON.parse(JSON.stringify(made.event)) as CdEvent
  expect(Object.keys(event).sort()).toEqual(['context', 'subject'])
  const { context, subject } = event
  const allowed = [
    'specversion',
    'id',
    'source',
    'type',
    'timestamp',
    'schemaUri',
    'chainId',
    'links'
  ]
  for (const key of ['specversion', 'id', 'source', 'type', 'timestamp'])
    expect(context).toHaveProperty(key)
  for (const key of Object.keys(context)) expect(allowed).toContain(key)
  expect(() => new URL(context.source, 'https://base.example')).not.toThrow()
  expect(context.timestamp).toMatch(RFC_3339)
  for (const key of Object.keys(subject)) expect(['id', 'source', 'content']).toContain(key)
  expect(Object.keys(subject.content).sort()).toEqual(['artifactId', 'environment'])
  for (const key of Object.keys(subject.content.environment))
    expect(['id', 'source']).toContain(key)
  return event
}

describe('cdEvent', () => {
  it('is service.deployed, with the change as its id and the run as its source', () => {
    expect(eventOf(CHANGE, 'chg_7', BASIS)).toEqual({
      context: {
        specversion: CDEVENTS_SPEC_VERSION,
        id: 'chg_7',
        source: RUN_URL,
        type: 'dev.cdevents.service.deployed.0.3.0',
        timestamp: '2026-01-02T03:04:05.678Z'
      },
      subject: {
        id: 'Acme/Shop',
        source: 'https://github.com/Acme/Shop',
        content: {
          environment: { id: 'production' },
          artifactId: `pkg:github/acme/shop@${SHA.toLowerCase()}`
        }
      }
    })
  })

  it('is service.rolledback for a rollback, and names the image that shipped', () => {
    const shipped = { ...emptyShipped(), rollback: true }
    const artifact = parseArtifact(`ghcr.io/acme/shop@sha256:${'b'.repeat(64)}`)
    const event = eventOf(CHANGE, 'chg_8', { ...BASIS, shipped }, artifact)
    expect(event.context.type).toBe('dev.cdevents.service.rolledback.0.3.0')
    expect(event.subject.content.artifactId).toBe(artifact?.purl)
    const triage = { remediation: { type: 'rollback', of: 'v1' } } as ChangeBasis['triage']
    expect(eventOf(CHANGE, 'chg_9', { ...BASIS, triage }).context.type).toBe(
      'dev.cdevents.service.rolledback.0.3.0'
    )
  })

  it('without a run page, names the repository as its source', () => {
    const run = { ...RUN, pipeline: { repositoryUrl: 'https://github.com/Acme/Shop' } }
    const { context } = eventOf(CHANGE, 'chg_10', { run, recordedAt: FINISHED })
    expect(context.source).toBe('https://github.com/Acme/Shop')
    expect(context.timestamp).toBe('2026-01-02T03:04:05.678Z')
  })

  it('names the commit as a generic purl off GitHub and Bitbucket, with its repository', () => {
    const run = { ...RUN, pipeline: { repositoryUrl: 'https://gitlab.example.com/acme/shop' } }
    const change = { ...CHANGE, service: 'acme/shop', version: 'v1.4.2' }
    expect(eventOf(change, 'c', { run }).subject.content.artifactId).toBe(
      // As the purl specification's generic example writes it: git%2Bhttps.
      'pkg:generic/acme/shop@v1.4.2?vcs_url=git%2Bhttps://gitlab.example.com/acme/shop'
    )
    const bitbucket = { ...RUN, pipeline: { repositoryUrl: 'https://bitbucket.org/Acme/Shop' } }
    expect(eventOf(CHANGE, 'c', { run: bitbucket }).subject.content.artifactId).toBe(
      `pkg:bitbucket/acme/shop@${SHA.toLowerCase()}`
    )
    const bare = { ...RUN, pipeline: {} }
    const event = eventOf({ ...change, version: '1.0 rc:1' }, 'c', { run: bare })
    expect(event.subject.content.artifactId).toBe('pkg:generic/acme/shop@1.0%20rc%3A1')
    expect(event.subject).not.toHaveProperty('source')
    // Without the run's page or the repository, the source is what made the event.
    expect(event.context.source).toBe(ACTION_NAME)
  })

  it('writes every purl as the specification does, each part percent-encoded', () => {
    const run = {
      ...RUN,
      pipeline: { repositoryUrl: 'https://github.com/acme/we%20ird%40x%3Fq%23f' }
    }
    const { artifactId } = eventOf(CHANGE, 'c', { run }).subject.content
    expect(artifactId).toBe(`pkg:github/acme/we%20ird%40x%3Fq%23f@${SHA.toLowerCase()}`)
    expect(parseArtifact(artifactId)?.purl).toBe(artifactId)
  })

  it.each([
    ['failed', { outcome: 'failure', status: 'failure', finishedAt: 0 }, 'the deploy failed'],
    [
      'was cancelled',
      { outcome: 'cancelled', status: 'cancelled', finishedAt: 0 },
      'the deploy was cancelled'
    ]
  ] as const)('gives none when the deploy %s', (_, deploy, why) => {
    expect(cdEvent(CHANGE, 'c', { run: RUN, deploy })).toEqual({ none: why })
  })

  it('gives none when the event says the deploy failed, or without an environment', () => {
    const run = { ...RUN, outcome: { outcome: 'failure' as const, status: 'error' } }
    expect(cdEvent(CHANGE, 'c', { run })).toEqual({ none: 'the deploy failed' })
    expect(cdEvent({ ...CHANGE, environment: undefined }, 'c', BASIS)).toEqual({
      none: 'the change has no environment'
    })
  })
})
