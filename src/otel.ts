/**
 * A change in OpenTelemetry's names (semantic conventions 1.44.0), so that tools reading telemetry
 * can join a deploy to it, and the artifact that shipped. Only what the run knows: an unknown
 * attribute is absent, never empty or guessed.
 */
import type { ChangeBasis } from './change.ts'
import type { DeployOutcome } from './deploy.ts'
import { isFullSha } from './shipped/compare.ts'
import type { Artifact } from './values/artifact.ts'

export const OTEL_SCHEMA_URL = 'https://opentelemetry.io/schemas/1.44.0'
/** The `otel` object, serialized; past it, the longest values are left out first. */
export const MAX_OTEL_BYTES = 4096

// prettier-ignore
const RESULTS: Partial<Record<DeployOutcome, [status: string, result: string]>> = {
  success: ['succeeded', 'success'], failure: ['failed', 'failure'], cancelled: ['failed', 'cancellation']
}
type Subject = { service?: string; version?: string; environment?: string }

/** custom_metadata's `otel` (unless turned off) and `artifact`, each when there is something. */
export function standardMetadata(
  subject: Subject,
  artifact: Artifact | undefined,
  { run, deploy, shipped }: ChangeBasis,
  otel: boolean
): Record<string, unknown> {
  const [status, result] = RESULTS[deploy?.outcome ?? run.outcome?.outcome ?? 'unknown'] ?? []
  const { image, purl, reference, digest } = artifact ?? {}
  const attributes: Record<string, unknown> = {
    'deployment.environment.name': subject.environment,
    'service.name': subject.service,
    'service.version': subject.version,
    'deployment.status': status,
    'cicd.pipeline.result': result,
    ...run.otel,
    'vcs.ref.head.revision': [subject.version, run.version].find(isFullSha),
    'vcs.ref.base.revision': shipped?.previousSha,
    'cicd.pipeline.task.type': run.otel?.['cicd.pipeline.task.name'] && 'deploy',
    'artifact.purl': purl,
    'container.image.name': image?.name,
    'container.image.tags': image?.tag && [image.tag],
    'container.image.repo_digests': image && digest && [`${image.name}@${digest}`]
  }
  for (const [key, value] of Object.entries(attributes)) if (!value) delete attributes[key]
  const object = { schema_url: OTEL_SCHEMA_URL, attributes }
  while (Buffer.byteLength(JSON.stringify(object)) > MAX_OTEL_BYTES) {
    const size = (key: string) => JSON.stringify(attributes[key]).length
    delete attributes[Object.keys(attributes).sort((a, b) => size(b) - size(a))[0]]
  }
  return {
    ...(otel && { otel: object }),
    ...(artifact && { artifact: { purl, reference, digest } })
  }
}
