/**
 * A notification of Argo CD's webhook service or of Flux's generic-hmac provider -> what it says of
 * one deploy. Each field is read once, checked and bounded: a value that is not what it should be
 * is absent, never guessed nor passed on raw. Pure.
 */
import { withoutUndefined } from '../change.ts'
import type { DeployOutcome } from '../deploy.ts'
import { attempt } from '../errors.ts'
import { isJsonObject } from '../helpers/json.ts'
import { truncateText, UNSEEN_CHARACTERS } from '../helpers/text.ts'
import { parseArtifact } from '../values/artifact.ts'

export type Controller = 'argocd' | 'flux'

/** One notification, read and checked: what it says of one deploy. JSON-serializable. */
export interface Notification {
  controller: Controller
  /** Argo CD `namespace/name@startedAt`; Flux `uid@revision` (`@token`: a Helm release's values). */
  deployKey: string
  /** Argo CD `namespace/name`; Flux `Kind/namespace/name`. */
  object: string
  /** 'progressing': Argo CD's sync succeeded while health is still Progressing. */
  stage: 'running' | 'progressing' | 'final'
  service: string
  environment?: string
  version?: string
  user?: string
  /** Milliseconds since the epoch. */
  startedAt?: number
  finishedAt?: number
  outcome: DeployOutcome
  /** The controller's words for how it ended: Argo CD's phase and health, Flux's reason. */
  status: string
  message?: string
  /** When the notification itself says it (Argo CD's history). */
  previousVersion?: string
  rollback: boolean
  /** An image with a digest, as the `artifact` setting takes it. */
  artifact?: string
  repository?: string
  link?: { text: string; url: string }
  /** The rest, for custom_metadata under the controller's key. */
  metadata: Record<string, unknown>
}

/** Why a body is not the documented shape is one line that quotes nothing of it. */
export type ReadNotification =
  { notification: Notification } | { ignored: string } | { invalid: string }

/** A Kubernetes name (a DNS subdomain); also the bound of a kind, uid, user or service. */
export const MAX_NAME_CHARS = 253
/** A longer revision, URL, image or metadata value is absent. */
const MAX_VALUE_CHARS = 512
/** Helm appends its logs to a failure's message. */
export const MAX_NOTIFICATION_MESSAGE_CHARS = 1000
/** Summary images, sources, the latest history entries. */
const MAX_LIST_ITEMS = 100
/** Argo CD's other sources, Flux's other metadata. */
const MAX_METADATA_ENTRIES = 16
const SERVICE_ANNOTATION = 'change-tracking/service'
const ENVIRONMENT_ANNOTATION = 'change-tracking/environment'

const UNSAFE_IN_LINE = new RegExp(`[${UNSEEN_CHARACTERS}]`, 'u')
/** A message may hold tabs and line breaks. */
const UNSAFE_IN_MESSAGE = new RegExp(`(?![\\t\\n\\r])[${UNSEEN_CHARACTERS}]`, 'u')
const KUBERNETES_NAME = /^[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?$/
/** The date's parts are captured to check that it exists. */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/

const PHASES = ['Running', 'Terminating', 'Succeeded', 'Failed', 'Error']
/** Argo CD's words for an operation that was terminated. */
const TERMINATED = /^Operation terminat(?:ed|ion had errors)/

const FLUX_KINDS = ['Kustomization', 'HelmRelease']
/** Any other reason records nothing. */
// prettier-ignore
const FLUX_OUTCOMES: Record<string, DeployOutcome> = {
  ReconciliationSucceeded: 'success', InstallSucceeded: 'success', UpgradeSucceeded: 'success', RollbackSucceeded: 'success',
  ReconciliationFailed: 'failure', HealthCheckFailed: 'failure', InstallFailed: 'failure', UpgradeFailed: 'failure'
}
/** Flux's metadata read into the change's own fields (token: a Helm release's values' checksum). */
const FLUX_FIELDS = ['revision', 'token', 'service', 'environment', 'repository']

export function readNotification(controller: Controller, body: unknown): ReadNotification {
  return controller === 'argocd' ? readArgoCd(body) : readFlux(body)
}

function readArgoCd(body: unknown): ReadNotification {
  const app = at(body, 'app')
  if (!isJsonObject(app)) return { invalid: 'the body has no "app" object' }
  const name = kubernetesName(at(app, 'metadata', 'name'))
  const namespace = kubernetesName(at(app, 'metadata', 'namespace'))
  if (!name || !namespace) {
    return { invalid: 'app.metadata.name and app.metadata.namespace must be Kubernetes names' }
  }
  const operation = at(app, 'status', 'operationState')
  const phaseGiven = at(operation, 'phase')
  // The template renders a missing operation as null fields: an Application never synced.
  if (phaseGiven === undefined || phaseGiven === null) {
    return { ignored: 'the Application has no sync operation' }
  }
  const phase = PHASES.find(known => known === phaseGiven)
  if (!phase) return { invalid: 'app.status.operationState.phase is not a phase of Argo CD' }
  const startedAt = time(at(operation, 'startedAt'))
  if (startedAt === undefined) {
    return { invalid: 'app.status.operationState.startedAt must be an RFC 3339 time' }
  }
  const health = line(at(app, 'status', 'health', 'status'), MAX_NAME_CHARS)
  const text = message(at(operation, 'message'))
  // A Running sync may not have its result yet: then what it was asked to sync (a branch, or none).
  const result = revisions(at(operation, 'syncResult'))
  const [version, ...otherRevisions] =
    result[0] === undefined ? revisions(at(operation, 'operation', 'sync')) : result
  const sources = items(at(app, 'spec', 'sources'))
  const [repository, ...otherRepositories] = (
    sources.length > 0 ? sources : [at(app, 'spec', 'source')]
  ).map(source => line(at(source, 'repoURL')))
  const otherSources = otherRevisions
    .slice(0, MAX_METADATA_ENTRIES)
    .map((revision, index) => withoutUndefined({ repository: otherRepositories[index], revision }))
  // Once this sync succeeded, its own entry is the one it started; the others are earlier deploys.
  const earlier = items(at(app, 'status', 'history'), 'latest')
    .filter(entry => time(at(entry, 'deployStartedAt')) !== startedAt)
    .map(entry => revisions(entry)[0])
  const previousVersion = earlier.at(-1)
  const initiator = at(operation, 'operation', 'initiatedBy')
  const automated = at(initiator, 'automated') === true
  const annotations = at(app, 'metadata', 'annotations')
  const destination = at(app, 'spec', 'destination')
  const notification: Notification = withoutUndefined({
    controller: 'argocd' as const,
    deployKey: `${namespace}/${name}@${new Date(startedAt).toISOString()}`,
    object: `${namespace}/${name}`,
    ...argoCdEnd(phase, health, text),
    service: line(at(annotations, SERVICE_ANNOTATION), MAX_NAME_CHARS) ?? name,
    environment:
      line(at(annotations, ENVIRONMENT_ANNOTATION), MAX_NAME_CHARS) ??
      kubernetesName(at(destination, 'namespace')),
    version,
    user: line(at(initiator, 'username'), MAX_NAME_CHARS) ?? (automated ? 'argocd' : undefined),
    startedAt,
    finishedAt: time(at(operation, 'finishedAt')),
    status: health ? `${phase}, ${health}` : phase,
    message: text,
    previousVersion,
    rollback: version !== undefined && version !== previousVersion && earlier.includes(version),
    artifact: items(at(app, 'status', 'summary', 'images'))
      .map(image => line(image))
      .find(isPinnedImage),
    repository,
    link: applicationPage(at(body, 'context', 'argocdUrl'), namespace, name),
    metadata: withoutUndefined({
      project: line(at(app, 'spec', 'project'), MAX_NAME_CHARS),
      phase,
      health,
      automated,
      cluster: line(at(destination, 'name'), MAX_NAME_CHARS) ?? line(at(destination, 'server')),
      sources: otherSources.length > 0 ? otherSources : undefined
    })
  })
  return { notification }
}

/**
 * How far an operation is, by its phase and the Application's health. A terminated operation was
 * cancelled, though Argo CD marks it failed; a sync whose resources are still becoming healthy
 * is not over; health is read only once the sync succeeded.
 */
function argoCdEnd(phase: string, health?: string, text?: string) {
  const failed = phase === 'Failed' || phase === 'Error'
  const final = (outcome: DeployOutcome) => ({ stage: 'final' as const, outcome })
  if (phase === 'Terminating' || (failed && TERMINATED.test(text ?? ''))) return final('cancelled')
  if (failed) return final('failure')
  if (phase === 'Running') return { stage: 'running' as const, outcome: 'unknown' as const }
  if (health === 'Healthy') return final('success')
  if (health === 'Degraded') return final('failure')
  return { stage: 'progressing' as const, outcome: 'unknown' as const }
}

function readFlux(body: unknown): ReadNotification {
  const object = at(body, 'involvedObject')
  if (!isJsonObject(object)) return { invalid: 'the body has no "involvedObject" object' }
  const { kind } = object
  const reason = at(body, 'reason')
  if (typeof kind !== 'string' || typeof reason !== 'string') {
    return { invalid: 'involvedObject.kind and reason must be strings' }
  }
  if (!FLUX_KINDS.includes(kind)) {
    return { ignored: 'Flux reports deploys of Kustomizations and HelmReleases only' }
  }
  if (!Object.hasOwn(FLUX_OUTCOMES, reason)) return { ignored: "Flux's reason records no deploy" }
  const name = kubernetesName(object.name)
  const namespace = kubernetesName(object.namespace)
  const uid = kubernetesName(object.uid)
  if (!name || !namespace || !uid) {
    return { invalid: 'involvedObject.name, .namespace and .uid must be Kubernetes names' }
  }
  const metadata = at(body, 'metadata')
  const revision = line(at(metadata, 'revision'))
  if (!revision) return { invalid: 'metadata.revision must be a revision' }
  const repository = line(at(metadata, 'repository'))
  const { version, artifact } = readRevision(revision, repository)
  const others = Object.entries(isJsonObject(metadata) ? metadata : {})
    .filter(([key]) => !FLUX_FIELDS.includes(key))
    .slice(0, MAX_METADATA_ENTRIES)
    .map(([key, value]) => [line(key, MAX_NAME_CHARS), line(value)])
    .filter(([key, value]) => key !== undefined && value !== undefined)
  const notification: Notification = withoutUndefined({
    controller: 'flux' as const,
    deployKey: [uid, revision, line(at(metadata, 'token'))].filter(Boolean).join('@'),
    object: `${kind}/${namespace}/${name}`,
    stage: 'final' as const,
    service: line(at(metadata, 'service'), MAX_NAME_CHARS) ?? name,
    environment: line(at(metadata, 'environment'), MAX_NAME_CHARS) ?? namespace,
    version,
    finishedAt: time(at(body, 'timestamp')),
    outcome: FLUX_OUTCOMES[reason],
    status: reason,
    message: message(at(body, 'message')),
    rollback: reason === 'RollbackSucceeded',
    artifact,
    repository,
    metadata: withoutUndefined({
      ...Object.fromEntries(others),
      kind,
      uid,
      reason,
      severity: line(at(body, 'severity'), MAX_NAME_CHARS),
      controller: line(at(body, 'reportingController'), MAX_NAME_CHARS),
      revision
    })
  })
  return { notification }
}

/**
 * A Flux source's revision -> the version: a commit's SHA (`main@sha1:<sha>`, or before Flux 2.0
 * `main/<sha>`), an OCI artifact's digest (`<tag>@sha256:<digest>`: its image is the artifact),
 * or else the revision itself (a chart's version).
 */
function readRevision(revision: string, repository?: string) {
  const separator = revision.lastIndexOf('@')
  const id = revision.slice(separator + 1)
  if (/^sha1:[0-9a-f]{40}$/.test(id)) return { version: id.slice('sha1:'.length) }
  if (/^sha256:[0-9a-f]{64}$/.test(id)) {
    return {
      version: id,
      artifact: ociImage(repository, revision.slice(0, Math.max(0, separator)), id)
    }
  }
  const legacy = revision.slice(revision.lastIndexOf('/') + 1)
  return { version: /^[0-9a-f]{40}$/.test(legacy) && legacy !== revision ? legacy : revision }
}

function ociImage(repository: string | undefined, tag: string, digest: string) {
  if (!repository?.startsWith('oci://')) return undefined
  const image = `${repository.slice('oci://'.length)}${tag ? `:${tag}` : ''}@${digest}`
  return isPinnedImage(image) ? image : undefined
}

function isPinnedImage(image: string | undefined): image is string {
  return image !== undefined && attempt(() => parseArtifact(image))?.digest !== undefined
}

/** The Application's page, only on an http(s) address without credentials, query or fragment. */
function applicationPage(address: unknown, namespace: string, name: string) {
  const url = URL.parse(line(address) ?? '')
  if (!url || !['http:', 'https:'].includes(url.protocol)) return undefined
  if (url.username || url.password || url.search || url.hash) return undefined
  const root = url.href.endsWith('/') ? url.href : `${url.href}/`
  const page = new URL(`applications/${namespace}/${name}`, root).href
  return { text: `${name} in Argo CD`, url: page }
}

/** The revision of a sync, a sync's result or a history entry: with several sources, each one's. */
function revisions(value: unknown): (string | undefined)[] {
  const several = items(at(value, 'revisions')).map(revision => line(revision))
  return several.length > 0 ? several : [line(at(value, 'revision'))]
}

/** Undefined where the path leaves the objects. */
function at(value: unknown, ...path: string[]): unknown {
  let current = value
  for (const key of path) {
    current = isJsonObject(current) && Object.hasOwn(current, key) ? current[key] : undefined
  }
  return current
}

/** The first MAX_LIST_ITEMS items of an array (or its latest ones); none of anything else. */
function items(value: unknown, which: 'first' | 'latest' = 'first'): unknown[] {
  if (!Array.isArray(value)) return []
  return which === 'first' ? value.slice(0, MAX_LIST_ITEMS) : value.slice(-MAX_LIST_ITEMS)
}

/** A one-line string of at most `max` characters, trimmed; absent when empty, longer or unsafe. */
function line(value: unknown, max = MAX_VALUE_CHARS): string | undefined {
  // Measured before it is scanned: a megabyte of text is refused at once.
  if (typeof value !== 'string' || value.length > max) return undefined
  const text = value.trim()
  return text === '' || UNSAFE_IN_LINE.test(text) ? undefined : text
}

function kubernetesName(value: unknown): string | undefined {
  const text = line(value, MAX_NAME_CHARS)
  return text !== undefined && KUBERNETES_NAME.test(text) ? text : undefined
}

/** Text of several lines, cut to its bound and before any character unsafe in it. */
function message(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const cut = truncateText(value, MAX_NOTIFICATION_MESSAGE_CHARS)
  const unsafe = cut.search(UNSAFE_IN_MESSAGE)
  const text = unsafe === -1 ? cut : `${cut.slice(0, unsafe)}…`
  return text.trim() || undefined
}

/** Milliseconds since the epoch; absent unless a real date since 1970. */
function time(value: unknown): number | undefined {
  const match = RFC3339.exec(line(value, MAX_NAME_CHARS) ?? '')
  if (!match) return undefined
  const [year, month, day] = match.slice(1, 4).map(Number)
  // Date.UTC rolls a day its month lacks (02-30) over into the next month.
  const date = new Date(Date.UTC(year, month - 1, day))
  const real = year >= 1970 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  return real ? Date.parse(match[0]) : undefined
}
