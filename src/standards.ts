/**
 * Records in standards' names: a change's OpenTelemetry names (semantic conventions 1.44.0, none
 * empty or guessed) and artifact, and a CDEvents 0.5.1 event for a later step to send.
 */
import { randomUUID } from 'node:crypto'
import type { ChangeBasis, ChangeFields } from './change.ts'
import { ACTION_NAME } from './package.ts'
import type { ChangeRequest } from './service/client.ts'
import { isFullSha } from './shipped/compare.ts'
import { KNOWN_HOSTS, remoteRepository } from './shipped/git-lookup.ts'
import type { Artifact } from './values/artifact.ts'

export const OTEL_SCHEMA_URL = 'https://opentelemetry.io/schemas/1.44.0'
/** The `otel` object, serialized; past it, the longest values are left out first. */
export const MAX_OTEL_BYTES = 4096

// prettier-ignore
const RESULTS: Partial<Record<string, [status: string, result: string]>> = {
  success: ['succeeded', 'success'], failure: ['failed', 'failure'], cancelled: ['failed', 'cancellation']
}

/** custom_metadata's `otel` (unless turned off) and `artifact`, each when there is something. */
export function standardMetadata(
  { service, version, environment, artifact }: ChangeFields,
  { run, deploy, shipped }: ChangeBasis,
  otel: boolean
): Record<string, unknown> {
  const [status, result] = RESULTS[deploy?.outcome ?? run.outcome?.outcome ?? 'unknown'] ?? []
  const { image, purl, reference, digest } = artifact ?? {}
  const attributes: Record<string, unknown> = {
    'deployment.environment.name': environment,
    'service.name': service,
    'service.version': version,
    'deployment.status': status,
    'cicd.pipeline.result': result,
    ...run.otel,
    'vcs.ref.head.revision': [version, run.version].find(isFullSha),
    'vcs.ref.base.revision': shipped?.previousSha,
    'cicd.pipeline.task.type': run.otel?.['cicd.pipeline.task.name'] && 'deploy',
    'artifact.purl': purl,
    'container.image.name': image?.name,
    'container.image.tags': image?.tag && [image.tag],
    'container.image.repo_digests': image && digest && [`${image.name}@${digest}`]
  }
  for (const [key, value] of Object.entries(attributes)) if (!value) delete attributes[key]
  const object = { schema_url: OTEL_SCHEMA_URL, attributes }
  const size = (key: string) => JSON.stringify(attributes[key]).length
  while (Buffer.byteLength(JSON.stringify(object)) > MAX_OTEL_BYTES)
    delete attributes[Object.keys(attributes).sort((a, b) => size(b) - size(a))[0]]
  return {
    ...(otel && { otel: object }),
    ...(artifact && { artifact: { purl, reference, digest } })
  }
}

export const CDEVENTS_SPEC_VERSION = '0.5.1'

/** A change's CDEvent (service.rolledback for a rollback), or why it has none (mid-sentence). */
export function cdEvent(
  change: ChangeRequest,
  changeId: string | undefined,
  { run, deploy, shipped, triage, recordedAt }: ChangeBasis,
  artifact?: Artifact
): { event: object } | { none: string } {
  const outcome = deploy?.outcome ?? run.outcome?.outcome
  if (outcome === 'failure' || outcome === 'cancelled')
    return { none: `the deploy ${outcome === 'failure' ? 'failed' : 'was cancelled'}` }
  if (!change.environment) return { none: 'the change has no environment' }
  const repository = run.otel?.['vcs.repository.url.full']
  const rolledBack = shipped?.rollback || triage?.remediation?.type === 'rollback'
  const context = {
    specversion: CDEVENTS_SPEC_VERSION,
    id: changeId ?? randomUUID(),
    source: run.otel?.['cicd.pipeline.run.url.full'] ?? repository ?? ACTION_NAME,
    type: `dev.cdevents.service.${rolledBack ? 'rolledback' : 'deployed'}.0.3.0`,
    timestamp: new Date(deploy?.finishedAt ?? recordedAt ?? Date.now()).toISOString()
  }
  const artifactId = artifact?.purl ?? commitPurl(change, run.version, repository)
  const content = { environment: { id: change.environment }, artifactId }
  return { event: { context, subject: { id: change.service, source: repository, content } } }
}

/** The commit as a purl: on GitHub or Bitbucket their own types, else a generic one. */
function commitPurl(change: ChangeRequest, commit?: string, repository?: string): string {
  const { host = '', path = '' } = remoteRepository(repository) ?? {}
  const type = KNOWN_HOSTS.get(host)
  const sha = [change.version, commit].find(isFullSha)
  if ((type === 'github' || type === 'bitbucket') && path.split('/').length === 2 && sha)
    return `pkg:${type}/${path.toLowerCase()}@${sha.toLowerCase()}`
  // Each part percent-encoded as the purl specification says: a name's "/" and a URL's ":/" kept.
  const name = encodeURIComponent(change.service ?? '').replaceAll('%2F', '/')
  const version = encodeURIComponent(change.version ?? '')
  const url = encodeURIComponent(`git+${repository}`).replace(/%3A|%2F/g, decodeURIComponent)
  return `pkg:generic/${name}@${version}${repository ? `?vcs_url=${url}` : ''}`
}
