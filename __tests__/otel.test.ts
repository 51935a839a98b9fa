/**
 * OpenTelemetry's names in a change, built from what a door says of its run (a Pipeline), in
 * semantic conventions 1.44.0: never an empty or guessed value; the artifact beside it; the
 * user's own keys win; the whole within its bound.
 */
import { describe, expect, it } from '@jest/globals'
import { buildChangeRequest, type ChangeBasis, type RunDefaults } from '../src/change.ts'
import { MAX_OTEL_BYTES, OTEL_SCHEMA_URL } from '../src/otel.ts'
import type { ChangeFields } from '../src/settings.ts'
import { emptyShipped } from '../src/shipped/types.ts'
import { parseArtifact } from '../src/values/artifact.ts'

const SHA = '3f786850e387550fdab836ed7e6dc881de23001b'
const PREVIOUS = '9f2c1d0e8b7a69584736251403f2e1d0c9b8a796'
const DIGEST = `sha256:${'a'.repeat(64)}`
const OPTIONS = { githubMetadata: true, otelAttributes: true, triage: { autoLabels: false } }

type Metadata = Record<string, unknown> & {
  otel: { schema_url: string; attributes: Record<string, unknown> }
}

function metadataOf(fields: ChangeFields, basis: ChangeBasis, options = OPTIONS) {
  const change = buildChangeRequest(fields, basis, options)
  return JSON.parse(change.custom_metadata ?? '{}') as Metadata
}

/** A GitHub push to main, as the action's door gives it: GitHub names no job's own id or page. */
const githubPush = (): RunDefaults => ({
  service: 'octo-org/shop-api',
  version: SHA,
  metadata: { key: 'github', fields: {} },
  workspace: '/work',
  pipeline: {
    repositoryUrl: 'https://github.com/octo-org/shop-api',
    provider: 'github',
    ref: { name: 'main', type: 'branch' },
    name: 'Deploy',
    runId: '13901299999',
    runUrl: 'https://github.com/octo-org/shop-api/actions/runs/13901299999/attempts/1',
    task: 'deploy'
  }
})

describe('otel in custom_metadata', () => {
  it('on a GitHub push, with an image: every attribute the run knows, with its value', () => {
    const artifact = parseArtifact(`ghcr.io/octo-org/shop-api:1.4.2@${DIGEST}`)
    const shipped = { ...emptyShipped(), previousSha: PREVIOUS }
    const metadata = metadataOf(
      { environment: 'production', artifact },
      { run: githubPush(), shipped }
    )
    expect(metadata['otel']).toEqual({
      schema_url: OTEL_SCHEMA_URL,
      attributes: {
        'deployment.environment.name': 'production',
        'service.name': 'octo-org/shop-api',
        'service.version': SHA,
        'vcs.repository.url.full': 'https://github.com/octo-org/shop-api',
        'vcs.provider.name': 'github',
        'vcs.ref.head.name': 'main',
        'vcs.ref.head.type': 'branch',
        'cicd.pipeline.name': 'Deploy',
        'cicd.pipeline.run.id': '13901299999',
        'cicd.pipeline.run.url.full':
          'https://github.com/octo-org/shop-api/actions/runs/13901299999/attempts/1',
        'cicd.pipeline.task.name': 'deploy',
        'vcs.ref.head.revision': SHA,
        'vcs.ref.base.revision': PREVIOUS,
        'cicd.pipeline.task.type': 'deploy',
        'artifact.purl': `pkg:oci/shop-api@sha256%3A${'a'.repeat(64)}?repository_url=ghcr.io/octo-org/shop-api&tag=1.4.2`,
        'container.image.name': 'ghcr.io/octo-org/shop-api',
        'container.image.tags': ['1.4.2'],
        'container.image.repo_digests': [`ghcr.io/octo-org/shop-api@${DIGEST}`]
      }
    })
    expect(metadata['artifact']).toEqual({
      purl: artifact?.purl,
      reference: `ghcr.io/octo-org/shop-api:1.4.2@${DIGEST}`,
      digest: DIGEST
    })
  })

  it('for a tag pipeline whose job has its own id and page: the pipeline, the job, their pages and ids', () => {
    const run: RunDefaults = {
      service: 'acme/shop',
      version: SHA,
      environment: 'production',
      metadata: { key: 'ci', fields: {} },
      workspace: '/builds',
      pipeline: {
        repositoryUrl: 'https://gitlab.example.com/acme/shop',
        provider: 'gitlab',
        ref: { name: 'v1.4.2', type: 'tag' },
        name: 'Release',
        runId: '1187',
        runUrl: 'https://gitlab.example.com/acme/shop/-/pipelines/1187',
        task: 'deploy-production',
        taskId: '5521',
        taskUrl: 'https://gitlab.example.com/acme/shop/-/jobs/5521'
      }
    }
    const deploy = { outcome: 'success' as const, status: 'success', finishedAt: 0 }
    expect(metadataOf({}, { run, deploy })['otel'].attributes).toEqual({
      'deployment.environment.name': 'production',
      'service.name': 'acme/shop',
      'service.version': SHA,
      'deployment.status': 'succeeded',
      'cicd.pipeline.result': 'success',
      'vcs.repository.url.full': 'https://gitlab.example.com/acme/shop',
      'vcs.provider.name': 'gitlab',
      'vcs.ref.head.name': 'v1.4.2',
      'vcs.ref.head.type': 'tag',
      'cicd.pipeline.name': 'Release',
      'cicd.pipeline.run.id': '1187',
      'cicd.pipeline.run.url.full': 'https://gitlab.example.com/acme/shop/-/pipelines/1187',
      'cicd.pipeline.task.name': 'deploy-production',
      'cicd.pipeline.task.run.id': '5521',
      'cicd.pipeline.task.run.url.full': 'https://gitlab.example.com/acme/shop/-/jobs/5521',
      'vcs.ref.head.revision': SHA,
      'cicd.pipeline.task.type': 'deploy'
    })
  })

  it.each([
    ['failure', 'failed', 'failure'],
    ['cancelled', 'failed', 'cancellation']
  ] as const)(
    'a %s deploy at the job end is deployment.status %s, result %s',
    (outcome, status, result) => {
      const deploy = { outcome, status: outcome, startedAt: 0, finishedAt: 1000 }
      const { attributes } = metadataOf({}, { run: githubPush(), deploy })['otel']
      expect(attributes['deployment.status']).toBe(status)
      expect(attributes['cicd.pipeline.result']).toBe(result)
    }
  )

  it('leaves out what is unknown: no outcome, no environment, a version that is no commit', () => {
    const { attributes } = metadataOf(
      { version: 'v1.4.2' },
      { run: { ...githubPush(), version: undefined } }
    )['otel']
    for (const name of [
      'deployment.status',
      'cicd.pipeline.result',
      'deployment.environment.name',
      'vcs.ref.head.revision'
    ])
      expect(attributes).not.toHaveProperty(name)
    expect(attributes['service.version']).toBe('v1.4.2')
  })

  it('names nothing of the run that its door leaves empty or does not know', () => {
    const empty = { ...githubPush(), pipeline: { name: '', runId: '', task: '' } }
    const { attributes } = metadataOf({ environment: 'production' }, { run: empty })['otel']
    expect(attributes).toEqual({
      'deployment.environment.name': 'production',
      'service.name': 'octo-org/shop-api',
      'service.version': SHA,
      'vcs.ref.head.revision': SHA
    })
    const unknown = { ...githubPush(), pipeline: undefined }
    expect(metadataOf({}, { run: unknown })['otel'].attributes).toEqual({
      'service.name': 'octo-org/shop-api',
      'service.version': SHA,
      'vcs.ref.head.revision': SHA
    })
  })

  it('is turned off by otel-attributes: false, not by github-metadata: false', () => {
    const run = githubPush()
    expect(metadataOf({}, { run }, { ...OPTIONS, otelAttributes: false })).not.toHaveProperty(
      'otel'
    )
    expect(metadataOf({}, { run }, { ...OPTIONS, githubMetadata: false })).toHaveProperty('otel')
  })

  it("leaves the user's own otel and artifact keys as they gave them", () => {
    const customMetadata = { otel: { mine: true }, artifact: 'build 7' }
    const artifact = parseArtifact('nginx:1.27')
    const metadata = metadataOf({ customMetadata, artifact }, { run: githubPush() })
    expect(metadata['otel']).toEqual({ mine: true })
    expect(metadata['artifact']).toBe('build 7')
  })

  it(`stays within ${MAX_OTEL_BYTES} bytes, leaving out the longest values first`, () => {
    const { attributes } = metadataOf(
      { environment: 'e'.repeat(5000), service: 's'.repeat(3000) },
      { run: githubPush() }
    )['otel']
    expect(attributes).not.toHaveProperty('deployment.environment.name')
    expect(attributes).not.toHaveProperty('service.name')
    expect(attributes['vcs.ref.head.revision']).toBe(SHA)
  })
})
