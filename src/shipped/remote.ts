/**
 * A repository's remote (an https or ssh URL, or git's scp-like `host:path`) read for its host and
 * path only, and its web page: never its credentials, never a path that climbs out with "..".
 */
import { attempt } from '../errors.ts'
import type { Forge } from './types.ts'

/** The forges known by their public host: their pages are linked, with the kind's paths. */
export const KNOWN_HOSTS = new Map<string, Forge['kind']>([
  ['github.com', 'github'],
  ['gitlab.com', 'gitlab'],
  ['bitbucket.org', 'bitbucket'],
  ['gitea.com', 'gitea']
])

/** A remote's page and forge, no credentials: on a known forge, the run's server, or as https. */
export function repositoryPage(
  remote: string | undefined,
  server?: { url?: string; kind?: Forge['kind'] }
): { url: string; provider?: Forge['kind'] } | undefined {
  const repository = remoteRepository(remote)
  if (!repository) return undefined
  const own = URL.parse(server?.url ?? '')
  const ours = own?.hostname.toLowerCase() === repository.host
  const given = URL.parse(remote ?? '')
  const known = KNOWN_HOSTS.get(repository.host)
  const https = given?.protocol === 'https:' ? given.origin : undefined
  // A known forge's public page, else the run's own server's, else the remote's own https page.
  const unknown = ours ? own!.origin : https
  const origin = known ? `https://${repository.host}` : unknown
  const path = repository.path.split('/').map(encodeURIComponent).join('/')
  const provider = known ?? (ours ? server?.kind : undefined)
  return origin === undefined ? undefined : { url: `${origin}/${path}`, provider }
}

/** A remote's host (lowercase, without a port) and its repository's path, never its credentials. */
export function remoteRepository(remote?: string): { host: string; path: string } | undefined {
  const url = remote?.trim() ?? ''
  if (dotted(url)) return undefined
  // scp-like: a colon before any slash, after more than a drive letter (C:\repo is a folder).
  const colon = url.indexOf(':')
  const slash = url.indexOf('/')
  const scp = !url.includes('://') && colon > 1 && (slash === -1 || colon < slash)
  const parsed = URL.parse(scp ? `ssh://${url.slice(0, colon)}/${url.slice(colon + 1)}` : url)
  const path = parsed?.hostname && attempt(() => cleanPath(decodeURIComponent(parsed.pathname)))
  return parsed && path ? { host: parsed.hostname.toLowerCase(), path } : undefined
}

/** A repository's path without its empty segments (leading or doubled slashes) or ".git". */
export function cleanPath(path: string | undefined): string | undefined {
  const joined = (path ?? '').split('/').filter(Boolean).join('/')
  return dotted(joined) ? undefined : joined.replace(/\.git$/, '') || undefined
}

/** A path (or remote) with a "." or ".." segment, decoded: it would name another repository. */
export function dotted(path: string): boolean {
  const decoded = attempt(() => decodeURIComponent(path)) ?? path
  return decoded.split(/[/:]/).some(segment => segment === '.' || segment === '..')
}
