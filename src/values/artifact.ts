/**
 * The artifact that shipped: a purl, or an OCI image reference read by Docker's grammar and written
 * as the purl specification's OCI type. Only a digest pins an image: without one, no purl.
 */
import { Inputs, type Artifact } from '../settings.ts'
import { quote } from '../errors.ts'
import { refusal } from './parsers.ts'

export const MAX_ARTIFACT_CHARS = 1000

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/
const DOMAIN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::\d+)?$/i
/**
 * A purl as its specification writes one: a type, then a name and what follows it in printable
 * ASCII, every other character percent-encoded (a space, a control character, non-ASCII text).
 */
const PURL = /^pkg:[a-z][a-z0-9.+-]*\/(?!\/)(?:[\w.~!$&'()*+,;=:@/?#-]|%[0-9a-f]{2})+$/i
/** User information before a registry (`user:password@ghcr.io/…`): credentials, never repeated. */
const CREDENTIALS = /^(?:[a-z][a-z0-9+.-]*:\/\/)?[^/@\s]+@[^/@\s]*\//i

export function parseArtifact(raw: string): Artifact | undefined {
  const value = raw.trim()
  if (value === '') return undefined
  const refuse = (why: string) => refusal(Inputs.Artifact, `${why}; got ${quote(value)}.`)
  if (value.length > MAX_ARTIFACT_CHARS)
    throw refuse(`must be at most ${MAX_ARTIFACT_CHARS.toLocaleString('en')} characters`)
  if (CREDENTIALS.test(value))
    throw refusal(
      Inputs.Artifact,
      'must not hold credentials (user:password@ before the registry), which are not repeated here: give the image reference alone.'
    )
  if (value.startsWith('pkg:') && PURL.test(value)) return { purl: value }
  if (value.startsWith('pkg:'))
    throw refuse('must be a package URL (pkg:TYPE/NAME…), each part percent-encoded')
  const [named, digest, extra] = value.split('@')
  if (digest !== undefined && (extra !== undefined || !/^sha256:[0-9a-f]{64}$/.test(digest)))
    throw refuse('must name its digest as sha256: and 64 lowercase hex digits')
  // The tag follows the last colon after the last slash: one before a slash is a registry's port.
  const [, path, tag] = /^(.*?)(?::([^/:]*))?$/s.exec(named)!
  const parts = path.split('/')
  // The first part is a registry when it looks like a host, as Docker reads it.
  const hosted = parts.length > 1 && /[.:]|^localhost$/.test(parts[0])
  const registry = hosted ? parts.shift()! : 'docker.io'
  if (!hosted && parts.length === 1) parts.unshift('library')
  const valid = DOMAIN.test(registry) && parts.every(part => COMPONENT.test(part))
  if (!valid || (tag !== undefined && !/^\w[\w.-]{0,127}$/.test(tag)))
    throw refuse('must be an OCI image reference (registry/path:tag@sha256:…) or a purl (pkg:…)')
  const name = `${registry}/${parts.join('/')}`
  const reference = `${name}${tag ? `:${tag}` : ''}${digest ? `@${digest}` : ''}`
  const qualifiers = `?repository_url=${name}${tag ? `&tag=${tag}` : ''}`
  const purl = digest && `pkg:oci/${parts.at(-1)}@${digest.replace(':', '%3A')}${qualifiers}`
  return { ...(purl && { purl }), reference, ...(digest && { digest }), image: { name, tag } }
}
