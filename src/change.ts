/**
 * One change, built once: the run's defaults, completed with what it ships, one service of
 * several and how the deploy ended, and the user's fields merged over them, giving the body of
 * POST /v2/change. The user's value wins here and nowhere else, but for a deploy's outcome that
 * the action knows: a fact it saw, which no label or metadata of the user's overrules.
 */
import {
  deployMetadata,
  type DeployOutcome,
  type DeployRecord,
  type EventOutcome
} from './deploy.ts'
import { describeChange, type DescriptionParts } from './describe.ts'
import { isJsonObject } from './helpers/json.ts'
import { leadTime } from './lead-time.ts'
import type { ChangeRequest } from './service/client.ts'
import { otelOf, type Pipeline } from './otel.ts'
import type { ChangeFields, Settings } from './settings.ts'
import { shippedMetadata } from './shipped/metadata.ts'
import type { Shipped } from './shipped/types.ts'
import { contradictsOutcome, labelsWith } from './triage/labels.ts'
import { riskNames } from './triage/risk.ts'
import type { Triage } from './triage/triage.ts'

/**
 * The run as plain data, whichever door read it (a GitHub event and the runner's variables, or a
 * CI's variables): the change's defaults, and where its pages and links are.
 */
export interface RunDefaults {
  /** The repository's path ("owner/repo", "group/project"). */
  service?: string
  version?: string
  user?: string
  environment?: string
  /** The event's own sentence, when it says something. */
  eventDescription?: string
  /** How the event says the deploy ended (deployment_status, workflow_run). */
  outcome?: EventOutcome
  /** A push that deleted its branch or tag: nothing was deployed. */
  deletedRef?: boolean
  /** The pushed branch or the pull request's head branch. */
  branch?: string
  /**
   * The run's own fields in custom_metadata, under `key` ("github": repository, sha, ref, run_url,
   * …; "ci": provider, build_url, …); what shipped and a service selection go under `shippedKey`
   * ("git"), or are added to the run's own fields without one.
   */
  metadata: { key: string; fields: Record<string, unknown>; shippedKey?: string }
  /** The web root and the repository ("owner/repo") where commits and issues are linked, if any. */
  links?: { serverUrl: string; repository: string }
  /** The run's page, as the summary links it ("Run 42"). */
  runLink?: { text: string; url: string }
  /** Where a relative events file is read from. */
  workspace: string
  /** Where the run comes from: the repository, the pipeline and its task, each known part. */
  pipeline?: Pipeline
  /** Whether a CDEvent is made of each change recorded: a later step or a file can read it. */
  cdevent?: boolean
}

/** Everything a change is built from besides the user's fields. */
export interface ChangeBasis {
  run: RunDefaults
  shipped?: Shipped
  /** One service of several: its name, what its patterns matched when known, and its metadata. */
  service?: DescriptionParts['service'] & { metadata?: Record<string, unknown> }
  /** At a job's end: how the deploy ended; the change is created at its start. */
  deploy?: DeployRecord
  /** Milliseconds since the epoch: when the change is recorded, for the lead time. */
  recordedAt?: number
  /** The issues, risk and remediation read from what shipped. */
  triage?: Triage
}

/**
 * What the action adds besides the defaults, as the settings say: the run's own fields (and what
 * shipped) in custom_metadata, OpenTelemetry's names, and its labels after the user's.
 */
type ChangeOptions = Pick<Settings, 'githubMetadata' | 'otelAttributes'> & {
  triage: Pick<Settings['triage'], 'autoLabels'>
}

/** The version and environment a change is about: what the lookup looks up. */
export function changeSubject(fields: ChangeFields, run: RunDefaults) {
  return {
    version: present(fields.version) ?? present(run.version),
    environment: present(fields.environment) ?? present(run.environment)
  }
}

/**
 * The user's fields over the defaults. Fields that end up empty are absent from the result (not
 * present as undefined), so the service applies its own defaults.
 */
export function buildChangeRequest(
  fields: ChangeFields,
  basis: ChangeBasis,
  options: ChangeOptions
): ChangeRequest {
  const { run, shipped, service, deploy, triage } = basis
  const { version, environment } = changeSubject(fields, run)
  // The event's words name the event's commit: not the user's other version.
  const event = version === run.version ? run.eventDescription : undefined
  // A service given is what the change is about: named before the event's words, or for the repository.
  const named = present(fields.service)
  const description =
    present(fields.description) ??
    describeChange({
      event,
      repository: named ?? run.service,
      version,
      environment,
      shipped,
      service: service ?? (named && event ? { name: named } : undefined),
      deploy
    })
  const serviceName = named ?? present(service?.name) ?? present(run.service)
  const subject = { service: serviceName, version, environment, artifact: fields.artifact }
  // In the interface's order, so the body reads the way the service documents it.
  return withoutUndefined({
    description,
    environment,
    service: serviceName,
    version,
    user: present(fields.user) ?? present(run.user),
    comment: present(fields.comment),
    team: present(fields.team),
    labels: present(
      labelsWith(
        fields.labels ?? [],
        {
          outcome: endedWith(basis),
          remediation: triage?.remediation?.type,
          risk: triage && riskNames(triage),
          issues: triage?.issues
        },
        options.triage.autoLabels
      ).join(',')
    ),
    custom_metadata: customMetadata(
      fields.customMetadata,
      {
        ...defaultMetadata(basis, options.githubMetadata),
        ...standardMetadata(subject, basis, options.otelAttributes)
      },
      endedWith(basis)
    ),
    created_at: fields.createdAt ?? (deploy?.startedAt && Math.floor(deploy.startedAt / 1000))
  })
}

/** How the deploy ended: at the job's end, or as the event says. */
function endedWith({ deploy, run }: ChangeBasis): DeployOutcome {
  return deploy?.outcome ?? run.outcome?.outcome ?? 'unknown'
}

/**
 * One warning when the user's labels or custom-metadata's `deploy.outcome` say another outcome
 * than the one the action knows, naming what was dropped or replaced and the outcome kept;
 * undefined when they agree or the action does not know it.
 */
export function overruledOutcome(fields: ChangeFields, basis: ChangeBasis): string | undefined {
  const outcome = endedWith(basis)
  if (outcome === 'unknown') return undefined
  const claims = (fields.labels ?? [])
    .filter(text => contradictsOutcome(text, outcome))
    .map(text => `the label ${JSON.stringify(text)} was dropped`)
  const deploy = isJsonObject(fields.customMetadata) ? fields.customMetadata.deploy : undefined
  if (isJsonObject(deploy) && deploy.outcome !== undefined && deploy.outcome !== outcome) {
    claims.push(`custom-metadata's deploy.outcome ${JSON.stringify(deploy.outcome)} was replaced`)
  }
  if (claims.length === 0) return undefined
  return `The deploy ended with ${outcome}, so the change keeps outcome ${outcome}: ${claims.join('; ')}.`
}

/**
 * The keys the action adds to custom_metadata: the run's ("github" or "ci") and what shipped ("git"
 * on the command line), unless turned off, "deploy" and "remediation".
 */
function defaultMetadata(basis: ChangeBasis, includeRunMetadata: boolean): Record<string, unknown> {
  const { run, shipped, service, deploy, recordedAt, triage } = basis
  const outcome = endedWith(basis)
  // Commits of a deploy that did not ship them have not waited yet: the next success counts them.
  const shippedNow = outcome === 'success' || (outcome === 'unknown' && deploy === undefined)
  const waited =
    shipped && recordedAt !== undefined && shippedNow
      ? leadTime(shipped.commits, recordedAt)
      : undefined
  const found = {
    ...((shipped ?? triage) && shippedMetadata(shipped, triage)),
    ...(waited && { lead_time_seconds: waited }),
    ...service?.metadata
  }
  const { key, fields, shippedKey = key } = run.metadata
  const keys =
    shippedKey === key
      ? { [key]: { ...fields, ...found } }
      : { [key]: fields, ...(Object.keys(found).length > 0 && { [shippedKey]: found }) }
  return withoutUndefined({
    ...(includeRunMetadata && keys),
    deploy: deploy ? deployMetadata(deploy) : run.outcome,
    remediation: triage?.remediation
  })
}

/**
 * The default metadata with the user's object merged over it (their keys win). A user value that
 * is not an object cannot hold the defaults, so it is sent as given. When the action knows the
 * outcome, a user's `deploy` object is merged over the action's, keeping the known outcome.
 */
function customMetadata(
  userValue: unknown,
  base: Record<string, unknown>,
  outcome: DeployOutcome
): string | undefined {
  if (userValue !== undefined && !isJsonObject(userValue)) return JSON.stringify(userValue)
  if (userValue === undefined && Object.keys(base).length === 0) return undefined
  // Spread, not Object.assign: a user key named "__proto__" stays a plain key.
  const merged = { ...base, ...(userValue ?? {}) }
  if (outcome !== 'unknown' && isJsonObject(merged.deploy)) {
    merged.deploy = { ...(base.deploy as object), ...merged.deploy, outcome }
  }
  return JSON.stringify(merged)
}

/** The value, unless it is missing or blank. Never altered: the user's text is sent as written. */
function present(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value : undefined
}

/** The record without its undefined fields: absent, not present as undefined. */
export function withoutUndefined<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T
}

/**
 * custom_metadata's `otel`, OpenTelemetry's names for what is known (see otel.ts), unless turned
 * off, and `artifact`: each when there is something.
 */
function standardMetadata(
  subject: ChangeFields,
  basis: ChangeBasis,
  otel: boolean
): Record<string, unknown> {
  const { purl, reference, digest } = subject.artifact ?? {}
  return {
    ...(otel && {
      otel: otelOf(subject, {
        pipeline: basis.run.pipeline,
        outcome: endedWith(basis),
        commit: basis.run.version,
        previousSha: basis.shipped?.previousSha
      })
    }),
    ...(subject.artifact && { artifact: { purl, reference, digest } })
  }
}
