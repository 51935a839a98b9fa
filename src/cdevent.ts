/** A change as a CDEvents 0.5.1 event, for a later step to send. */
import type { ChangeBasis } from './change.ts'
import { ACTION_NAME } from './package.ts'
import type { ChangeRequest } from './service/client.ts'
import { isFullSha } from './shipped/compare.ts'
import { KNOWN_HOSTS, remoteRepository } from './shipped/remote.ts'
import type { Artifact } from './settings.ts'

export const CDEVENTS_SPEC_VERSION = '0.5.1'

/** A CDEvent: its context, and the service deployed to an environment. */
export interface CdEvent {
  context: Record<string, string>
  subject: {
    id?: string
    source?: string
    content: { environment: { id: string }; artifactId: string }
  }
}

/** A change's CDEvent (service.rolledback for a rollback), or why it has none (mid-sentence). */
export function cdEvent(
  change: ChangeRequest,
  changeId: string,
  { run, deploy, shipped, triage, recordedAt }: ChangeBasis,
  artifact?: Artifact
): { event: CdEvent } | { none: string } {
  const outcome = deploy?.outcome ?? run.outcome?.outcome
  if (outcome === 'failure' || outcome === 'cancelled')
    return { none: `the deploy ${outcome === 'failure' ? 'failed' : 'was cancelled'}` }
  if (!change.environment) return { none: 'the change has no environment' }
  const repository = run.pipeline?.repositoryUrl
  const rolledBack = shipped?.rollback || triage?.remediation?.type === 'rollback'
  const context = {
    specversion: CDEVENTS_SPEC_VERSION,
    id: changeId,
    source: run.pipeline?.runUrl ?? repository ?? ACTION_NAME,
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
  const parts = path.toLowerCase().split('/')
  if ((type === 'github' || type === 'bitbucket') && parts.length === 2 && sha)
    return `pkg:${type}/${parts.map(encodeURIComponent).join('/')}@${sha.toLowerCase()}`
  // Each part percent-encoded as the purl specification says: a name's "/" and a URL's ":/" kept.
  const name = encodeURIComponent(change.service ?? '').replaceAll('%2F', '/')
  const version = encodeURIComponent(change.version ?? '')
  const url = encodeURIComponent(`git+${repository}`).replace(/%3A|%2F/g, decodeURIComponent)
  return `pkg:generic/${name}@${version}${repository ? `?vcs_url=${url}` : ''}`
}
