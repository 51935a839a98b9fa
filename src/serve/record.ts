/**
 * The receiver's one seam to the core: a deploy it accepted, built into a change as every door
 * builds one (buildChangeRequest, its metadata under "argocd" or "flux"), and sent once. What the
 * answer means for the queue is said here: sent, wait and try again, or drop.
 */
import { buildChangeRequest, type ChangeBasis, type RunDefaults } from '../change.ts'
import type { DeployRecord } from '../deploy.ts'
import { attempt, errorMessage, ServiceError } from '../errors.ts'
import { ACTION_NAME, ACTION_VERSION } from '../package.ts'
import type { Redactor } from '../redact.ts'
import { ServiceClient, type ChangeRequest } from '../service/client.ts'
import type { FailureAdvice } from '../service/failures.ts'
import { Transport } from '../service/transport.ts'
import type { ChangeFields } from '../settings.ts'
import { parseArtifact } from '../values/artifact.ts'
import type { DeployChange } from './deploys.ts'

/** One attempt's bound: connect, upload and the whole answer. */
export const ATTEMPT_TIMEOUT_MS = 30_000

/** Answers that say "not now": the change waits, and is sent again. */
const WAIT_STATUSES = new Set([401, 403, 408, 429])

/** What one attempt came to: the change's id, why it waits, or why it is dropped. */
export type Recorded = { sent: string } | { wait: string; keyRejected: boolean } | { drop: string }

export class Recorder {
  private readonly transport: Transport
  private readonly client: ServiceClient

  constructor(options: {
    baseUrl: URL
    apiKey: string
    redactor: Redactor
    advice: FailureAdvice
  }) {
    this.transport = new Transport({
      ...options,
      timeoutMs: ATTEMPT_TIMEOUT_MS,
      maxAttempts: 1,
      userAgent: `${ACTION_NAME}/${ACTION_VERSION}`,
      // The sender's backoff bounds an outage (a day), not a run's budget: every attempt is made.
      retry: { outageBudgetMs: Number.POSITIVE_INFINITY }
    })
    this.client = new ServiceClient(this.transport)
  }

  /** Sends the change once; never throws. */
  async record(change: DeployChange): Promise<Recorded> {
    try {
      return { sent: await this.client.createChange(changeRequest(change)) }
    } catch (error) {
      return outcomeOf(error)
    }
  }

  /** Ends the attempt under way (it then waits for the next start) and sends nothing more. */
  close(): void {
    this.transport.close()
  }
}

/**
 * Unreachable, 401, 403, 408, 429 and 5XX wait; another 4XX is the service's refusal of this
 * change, and a 2XX without the documented answer may have stored it: either is dropped, as
 * sending it again cannot help or may record it twice. Anything else (a redirect, an untrusted
 * certificate) waits for whoever runs the receiver to fix it.
 */
export function outcomeOf(error: unknown): Recorded {
  const status = error instanceof ServiceError ? error.status : undefined
  const said = errorMessage(error)
  const refused =
    status !== undefined && status >= 400 && status < 500 && !WAIT_STATUSES.has(status)
  const maybeStored = status !== undefined && status >= 200 && status < 300
  if (refused || maybeStored) return { drop: said }
  return { wait: said, keyRejected: status === 401 || status === 403 }
}

/**
 * The change a deploy makes, from what its notification says. What shipped (the forge's commits
 * and pull requests between the previous deploy and this one, and their triage) joins `basis`
 * here, looked up before the change is built.
 */
export function changeRequest({ notification }: DeployChange): ChangeRequest {
  const { controller, startedAt, finishedAt, outcome, status } = notification
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
        previous_version: notification.previousVersion,
        ...notification.metadata
      }
    },
    outcome: { outcome, status },
    runLink: notification.link,
    workspace: ''
  }
  const deploy: DeployRecord | undefined =
    finishedAt === undefined ? undefined : { outcome, status, startedAt, finishedAt }
  const rollbackOf = notification.rollback ? notification.previousVersion : undefined
  const remediation =
    rollbackOf === undefined ? undefined : { type: 'rollback' as const, of: rollbackOf }
  const basis: ChangeBasis = {
    run,
    deploy,
    recordedAt: Date.now(),
    triage: remediation && { riskComplete: false, remediation }
  }
  return buildChangeRequest(fields, basis, {
    githubMetadata: true,
    otelAttributes: true,
    triage: { autoLabels: true }
  })
}
