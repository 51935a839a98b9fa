/**
 * A recorded change as a CDEvents 0.5.1 event (service.deployed, or service.rolledback for a
 * rollback), a document for a later step to send to an event broker; this project sends it
 * nowhere. CDEvents has no event for a failed or cancelled deploy, and requires an environment.
 */
import { randomUUID } from 'node:crypto'
import type { ChangeBasis } from './change.ts'
import { ACTION_NAME } from './package.ts'
import type { ChangeRequest } from './service/client.ts'
import { isFullSha } from './shipped/compare.ts'
import { KNOWN_HOSTS } from './shipped/git-lookup.ts'
import { purlPart, type Artifact } from './values/artifact.ts'

export const CDEVENTS_SPEC_VERSION = '0.5.1'

/** The event of one change, or why there is none (mid-sentence). */
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
  const environment = { id: change.environment }
  const artifactId = artifact?.purl ?? commitPurl(change, run.version, repository)
  const content = { environment, artifactId }
  return { event: { context, subject: { id: change.service, source: repository, content } } }
}

/** The commit as a purl: on GitHub or Bitbucket their own types, else a generic one. */
function commitPurl(change: ChangeRequest, commit?: string, repository?: string): string {
  const page = repository === undefined ? undefined : new URL(repository)
  const type = page && KNOWN_HOSTS.get(page.hostname)
  const path = page?.pathname.slice(1).toLowerCase().split('/') ?? []
  const sha = [change.version, commit].find(isFullSha)
  if ((type === 'github' || type === 'bitbucket') && path.length === 2 && sha)
    return `pkg:${type}/${path.join('/')}@${sha.toLowerCase()}`
  const name = purlPart(change.service ?? '', '%2F')
  const vcs = repository ? `?vcs_url=${purlPart(`git+${repository}`, '%3A%2F')}` : ''
  return `pkg:generic/${name}@${purlPart(change.version ?? '')}${vcs}`
}
