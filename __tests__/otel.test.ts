/**
 * OpenTelemetry's names in a change: what each door knows of its run, in semantic conventions
 * 1.44.0, never an empty or guessed value; the artifact beside it; the user's own keys win.
 */
import { describe, expect, it } from '@jest/globals'
import { contextDefaults } from '../src/action/defaults.ts'
import { runContextOf } from '../src/action/run-context.ts'
import { buildChangeRequest, type ChangeBasis } from '../src/change.ts'
import type { ChangeFields } from '../src/settings.ts'
import { ciDefaults, detectCiContext } from '../src/cli/ci-context.ts'
import { MAX_OTEL_BYTES, OTEL_SCHEMA_URL } from '../src/change.ts'
import type { Git } from '../src/shipped/git.ts'
import { repositoryPage } from '../src/shipped/remote.ts'
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

const githubPush = () =>
  contextDefaults(
    runContextOf(
      {
        GITHUB_EVENT_NAME: 'push',
        GITHUB_REPOSITORY: 'octo-org/shop-api',
        GITHUB_SERVER_URL: 'https://github.com',
        GITHUB_SHA: SHA,
        GITHUB_REF: 'refs/heads/main',
        GITHUB_REF_NAME: 'main',
        GITHUB_REF_TYPE: 'branch',
        GITHUB_WORKFLOW: 'Deploy',
        GITHUB_JOB: 'deploy',
        GITHUB_RUN_ID: '13901299999',
        GITHUB_RUN_ATTEMPT: '1'
      },
      { ref: 'refs/heads/main', after: SHA }
    ),
    '/work'
  )

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

  it('in a GitLab job on the command line: the pipeline, the job, their pages and ids', async () => {
    const env = {
      GITLAB_CI: 'true',
      CI_SERVER_URL: 'https://gitlab.example.com',
      CI_PROJECT_URL: 'https://gitlab.example.com/acme/shop',
      CI_PROJECT_PATH: 'acme/shop',
      CI_COMMIT_SHA: SHA,
      CI_COMMIT_REF_NAME: 'v1.4.2',
      CI_COMMIT_TAG: 'v1.4.2',
      CI_PIPELINE_ID: '1187',
      CI_PIPELINE_NAME: 'Release',
      CI_PIPELINE_URL: 'https://gitlab.example.com/acme/shop/-/pipelines/1187',
      CI_JOB_ID: '5521',
      CI_JOB_NAME: 'deploy-production',
      CI_JOB_URL: 'https://gitlab.example.com/acme/shop/-/jobs/5521',
      CI_ENVIRONMENT_NAME: 'production'
    }
    const git: Git = async () => ({ out: '', cut: false, said: '' })
    const run = ciDefaults(await detectCiContext(env, '/builds/acme/shop', { git }), '/builds')
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

describe('repositoryPage', () => {
  it.each([
    ['git@github.com:Acme/Shop.git', 'https://github.com/Acme/Shop', 'github'],
    ['ssh://git@gitlab.com/acme/shop.git', 'https://gitlab.com/acme/shop', 'gitlab'],
    [
      'https://x-token-auth:secret@bitbucket.org/acme/shop.git',
      'https://bitbucket.org/acme/shop',
      'bitbucket'
    ],
    [
      'https://user:pw@git.example.com:8443/acme/shop.git',
      'https://git.example.com:8443/acme/shop',
      undefined
    ]
  ])('%s is %s, without credentials', (remote, url, provider) => {
    expect(repositoryPage(remote)).toEqual({ url, provider })
  })

  it("converts an ssh remote only on a known forge or the run's own server", () => {
    expect(repositoryPage('git@git.example.com:acme/shop.git')).toBeUndefined()
    expect(
      repositoryPage('git@ghe.example.com:acme/shop.git', {
        url: 'https://ghe.example.com',
        kind: 'github'
      })
    ).toEqual({
      url: 'https://ghe.example.com/acme/shop',
      provider: 'github'
    })
  })
})
