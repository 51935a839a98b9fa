/**
 * OpenTelemetry's names (semantic conventions 1.44.0) for what a change knows, built here and
 * nowhere else: a door says where the run comes from in plain words (a Pipeline); none of the
 * names is empty or guessed.
 */
import type { DeployOutcome } from './deploy.ts'
import type { ChangeFields } from './settings.ts'
import { isFullSha } from './shipped/compare.ts'

export const OTEL_SCHEMA_URL = 'https://opentelemetry.io/schemas/1.44.0'
/** The `otel` object, serialized; past it, the longest values are left out first. */
export const MAX_OTEL_BYTES = 4096

/** Where a run comes from, as its door knows it: each part when it is known. */
export interface Pipeline {
  /** The repository's page, never with credentials. */
  repositoryUrl?: string
  /** The forge: 'github', 'gitlab', 'bitbucket', 'gitea'. */
  provider?: string
  /** The branch or tag the run is for. */
  ref?: { name: string; type: 'branch' | 'tag' }
  /** The pipeline (a workflow, a GitLab pipeline's name), its run's id and page. */
  name?: string
  runId?: string
  runUrl?: string
  /** The task the deploy runs in (a job), its id and page. */
  task?: string
  taskId?: string
  taskUrl?: string
}

// prettier-ignore
const RESULTS: Partial<Record<string, [status: string, result: string]>> = {
  success:   ['succeeded', 'success'],
  failure:   ['failed',    'failure'],
  cancelled: ['failed',    'cancellation']
}

/** What else a change knows, for its names: how the deploy ended, the commits at both ends. */
export interface OtelFacts {
  pipeline?: Pipeline
  outcome: DeployOutcome
  /** The run's own commit, when the change's version is not one. */
  commit?: string
  previousSha?: string
}

/** The `otel` object of a change: its schema, and the attributes known. */
export function otelOf(
  { service, version, environment, artifact }: ChangeFields,
  { pipeline = {}, outcome, commit, previousSha }: OtelFacts
): { schema_url: string; attributes: Record<string, unknown> } {
  const [status, result] = RESULTS[outcome] ?? []
  const { image, purl, digest } = artifact ?? {}
  const attributes: Record<string, unknown> = {
    'deployment.environment.name': environment,
    'service.name': service,
    'service.version': version,
    'deployment.status': status,
    'cicd.pipeline.result': result,
    'vcs.repository.url.full': pipeline.repositoryUrl,
    'vcs.provider.name': pipeline.provider,
    'vcs.ref.head.name': pipeline.ref?.name,
    'vcs.ref.head.type': pipeline.ref?.type,
    'cicd.pipeline.name': pipeline.name,
    'cicd.pipeline.run.id': pipeline.runId,
    'cicd.pipeline.run.url.full': pipeline.runUrl,
    'cicd.pipeline.task.name': pipeline.task,
    'cicd.pipeline.task.run.id': pipeline.taskId,
    'cicd.pipeline.task.run.url.full': pipeline.taskUrl,
    'vcs.ref.head.revision': [version, commit].find(isFullSha),
    'vcs.ref.base.revision': previousSha,
    'cicd.pipeline.task.type': pipeline.task && 'deploy',
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
  return object
}
