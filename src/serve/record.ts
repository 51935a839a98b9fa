/**
 * The receiver's one seam to the core: each waiting change, oldest first, built as every door
 * builds one (its metadata under "argocd" or "flux", with what shipped and its triage), sent
 * once, and kept waiting or dropped as the service's answer says.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { buildChangeRequest, type ChangeBasis, type RunDefaults } from '../change.ts'
import { findTriage } from '../commands/triage.ts'
import { formatDuration, type DeployRecord } from '../deploy.ts'
import { attempt, errorMessage, ServiceError } from '../errors.ts'
import { formatSeconds, plural } from '../helpers/text.ts'
import { ACTION_NAME, ACTION_VERSION } from '../package.ts'
import { ServiceClient, type ChangeRequest } from '../service/client.ts'
import { Transport, type TransportOptions } from '../service/transport.ts'
import type { ChangeFields, Settings } from '../settings.ts'
import type { ConfiguredForge, RemoteLookup } from '../shipped/forge-lookup.ts'
import type { Remediation } from '../triage/remediation.ts'
import { parseArtifact } from '../values/artifact.ts'
import type { DeployChange } from './deploys.ts'
import type { Log, Metrics } from './server.ts'
import type { StateFolder, Waiting } from './state.ts'

/** One attempt's bound: connect, upload and the whole answer. */
export const ATTEMPT_TIMEOUT_MS = 30_000
/** Answers that say "not now", as 5XX do: the change waits. */
const WAIT_STATUSES = new Set([401, 403, 408, 429])

export const SEND_POLICY = {
  /** The wait after a first failed attempt; each next one doubles, up to backoffMaxMs. */
  backoffBaseMs: 1_000,
  backoffMaxMs: 5 * 60_000,
  /** A change not recorded this long after it was accepted is dropped. */
  maxWaitMs: 24 * 60 * 60_000,
  /** Resolves after `ms`, or at once when the signal is aborted. */
  sleep: (ms: number, signal: AbortSignal): Promise<unknown> =>
    sleep(ms, undefined, { signal }).catch(() => undefined),
  clock: Date.now
}

/** The triage settings of a run given no input: built-in risk paths, issue keys of any prefix. */
const TRIAGE_DEFAULTS: Pick<Settings, 'includeCommits' | 'triage'> = {
  includeCommits: true,
  triage: { issueKeys: 'auto', autoLabels: true }
}

/** What one attempt came to: the change's id, why it waits, or why it is dropped. */
export type SendAttempt =
  { sent: string } | { wait: string; keyRejected: boolean } | { drop: string }

export interface Recorder {
  /** Looks up what the change shipped (once), then sends it once; never throws. */
  record: (change: DeployChange) => Promise<SendAttempt>
  /** Ends what is under way (the change waits for the next start); nothing more is sent. */
  close: () => void
}

type Service = Pick<TransportOptions, 'baseUrl' | 'apiKey' | 'redactor' | 'advice'> & {
  forges: readonly ConfiguredForge[]
  /** Where a lookup that fell short says so, in one warning. */
  log: Log
}

export function serviceRecorder({ forges, log, ...service }: Service): Recorder {
  const transport = new Transport({
    ...service,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
    maxAttempts: 1,
    userAgent: `${ACTION_NAME}/${ACTION_VERSION}`,
    // The sender's backoff bounds an outage (a day), not a run's budget: every attempt is made.
    retry: { outageBudgetMs: Number.POSITIVE_INFINITY }
  })
  const client = new ServiceClient(transport)
  const closing = new AbortController()
  // A change that waits for the service is sent again and again: its forge is asked once.
  let built: { key: string; request: ChangeRequest } | undefined
  return {
    async record(change) {
      if (built?.key !== change.key) {
        const { lookUpRemote } = await import('../shipped/forge-lookup.ts')
        const found = await lookUpRemote(forges, { ...change.notification, signal: closing.signal })
        const { controller, object } = change.notification
        if (found.warning)
          log('warn', `${controller} ${object}: ${found.warning}`, { controller, object })
        built = { key: change.key, request: changeRequest(change, found) }
      }
      try {
        return { sent: await client.createChange(built.request) }
      } catch (error) {
        return failedAttempt(error)
      }
    },
    close: () => {
      closing.abort()
      transport.close()
    }
  }
}

/**
 * Another 4XX is the service's refusal of this change, and a 2XX without the documented answer
 * may have stored it: either is dropped, as sending it again cannot help or may record it twice.
 * Anything else (a redirect, an untrusted certificate) waits for whoever runs the receiver.
 */
export function failedAttempt(error: unknown): SendAttempt {
  const status = error instanceof ServiceError ? error.status : undefined
  const said = errorMessage(error)
  const refused =
    status !== undefined && status >= 400 && status < 500 && !WAIT_STATUSES.has(status)
  const maybeStored = status !== undefined && status >= 200 && status < 300
  if (refused || maybeStored) return { drop: said }
  return { wait: said, keyRejected: status === 401 || status === 403 }
}

/**
 * The change a deploy makes, from what its notification says and what it shipped, with its
 * triage as the other doors find it. The controller's own word for a rollback (Argo CD's earlier
 * history entry, Flux's RollbackSucceeded) stands even when the previous version is unknown.
 */
export function changeRequest(
  { notification }: DeployChange,
  { shipped, links }: Pick<RemoteLookup, 'shipped' | 'links'>
): ChangeRequest {
  const { controller, startedAt, finishedAt, outcome, status, previousVersion } = notification
  const fields: ChangeFields = {
    service: notification.service,
    environment: notification.environment,
    version: notification.version,
    user: notification.user,
    createdAt: startedAt === undefined ? undefined : Math.floor(startedAt / 1000),
    artifact: attempt(() => parseArtifact(notification.artifact ?? ''))
  }
  const run: RunDefaults = {
    metadata: {
      key: controller,
      fields: {
        object: notification.object,
        status,
        message: notification.message,
        repository: notification.repository,
        previous_version: previousVersion,
        ...notification.metadata
      }
    },
    outcome: { outcome, status },
    links,
    runLink: notification.link,
    workspace: ''
  }
  const deploy: DeployRecord | undefined =
    finishedAt === undefined ? undefined : { outcome, status, startedAt, finishedAt }
  const found = findTriage({ settings: TRIAGE_DEFAULTS, run }, shipped)
  // Flux does not say what it rolled back from: `of` is absent when no earlier version was seen.
  const rollback: Remediation = { type: 'rollback', of: previousVersion }
  const triage = notification.rollback ? { ...found, remediation: rollback } : found
  const basis: ChangeBasis = { run, shipped, deploy, recordedAt: Date.now(), triage }
  return buildChangeRequest(fields, basis, {
    githubMetadata: true,
    otelAttributes: true,
    triage: { autoLabels: true }
  })
}

export interface Sending {
  state: StateFolder
  record: Recorder['record']
  log: Log
  metrics: Metrics
  policy?: Partial<typeof SEND_POLICY>
}

/** Sends until the signal is aborted; the change under way is finished first. */
export async function sendWaiting(sending: Sending, signal: AbortSignal): Promise<void> {
  const { state, log, metrics } = sending
  const policy = { ...SEND_POLICY, ...sending.policy }
  let failures = 0
  let keyRejectionSaid = false
  while (!signal.aborted) {
    const entry = state.next()
    if (entry === undefined) {
      await state.arrival(signal)
      continue
    }
    const recorded = await sendOrDrop(entry)
    if (!('wait' in recorded)) {
      failures = 0
      keyRejectionSaid = false
      await state.done(entry).catch((error: unknown) => {
        const why = errorMessage(error)
        log('warn', `A change sent could not be noted done (${why}): a restart sends it again.`)
      })
      continue
    }
    failures++
    const exponent = Math.min(failures - 1, 30)
    const delay = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** exponent)
    const { wait, keyRejected } = recorded
    const waiting = plural(state.waitingCount, 'change')
    if (!keyRejected) {
      log('warn', `${wait} ${waiting} wait; the next attempt is in ${formatSeconds(delay)}.`)
    } else if (!keyRejectionSaid) {
      keyRejectionSaid = true
      log('error', `${wait} Nothing is dropped: ${waiting} wait until the key is accepted.`)
    }
    await policy.sleep(delay, signal)
  }

  /** Sends the change, unless it waited too long; says what became of it. */
  async function sendOrDrop(entry: Waiting): Promise<SendAttempt | { expired: true }> {
    const change = state.read(entry)
    const { controller, object, service, outcome, deployKey } = change.notification
    const what = `${controller} ${object} (${service}, ${outcome})`
    const fields = { controller, object, deploy: deployKey }
    if (policy.clock() - entry.acceptedAt > policy.maxWaitMs) {
      metrics.dropped.expired++
      const since = new Date(entry.acceptedAt).toISOString()
      const within = `${formatDuration(policy.maxWaitMs / 1000)} of ${since}`
      log('error', `Dropped the change of ${what}: it was not recorded within ${within}.`, fields)
      return { expired: true }
    }
    const recorded = await sending.record(change)
    if ('sent' in recorded) {
      const id = recorded.sent
      metrics.recorded++
      log('info', `Recorded change ${id}: ${what}.`, { ...fields, change_id: id })
    } else if ('drop' in recorded) {
      metrics.dropped.refused++
      log('error', `Dropped the change of ${what}: ${recorded.drop}`, fields)
    }
    return recorded
  }
}
