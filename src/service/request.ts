/**
 * What a request to the service is, where it goes and how messages name it. Pure: nothing here
 * sends anything, so a dry run prints the same requests a real run sends.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { ServiceError } from '../errors.ts'

/** The header that carries the API key; the key goes nowhere else. */
export const API_KEY_HEADER = 'X-Service-ApiKey'

/** Advice for specific statuses, e.g. { 404: 'No change has that id.' }. */
export type StatusHints = Partial<Record<number, string>>

export interface ServiceRequest {
  method: 'GET' | 'POST'
  /** Path below the service root, already percent-encoded, no leading slash: 'v1/heartbeat/a%2Fb'. */
  path: string
  /** Query string, already encoded, without '?'. */
  query?: string
  body?: string | Uint8Array
  contentType?: string
  /** Extra advice the caller gives for specific statuses of this request. */
  hints?: StatusHints
}

export interface ServiceResponse {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/**
 * The longest URL the action builds: 1000 event ids of UUID length fit in a tenth of it, and
 * servers and proxies refuse far shorter ones, so a longer URL is a mistake to name, not to send.
 */
export const MAX_SERVICE_URL_CHARS = 400_000

/** "POST /v2/change": the call's name in messages (the service path, without the base prefix or query). */
export function callName(request: ServiceRequest): string {
  return `${request.method} /${request.path.replace(/^\/+/, '')}`
}

/** The service root: the base URL without query, fragment or credentials, ending with '/'. */
export function serviceRoot(baseUrl: URL): URL {
  const root = new URL(baseUrl.href)
  root.username = ''
  root.password = ''
  root.search = ''
  root.hash = ''
  if (!root.pathname.endsWith('/')) root.pathname += '/'
  return root
}

/**
 * The absolute URL of a request below the service root (see serviceRoot). It never leaves the
 * root's origin and prefix; one longer than MAX_SERVICE_URL_CHARS is refused, naming the call.
 */
export function requestUrl(root: URL, request: ServiceRequest): URL {
  const url = new URL(request.path.replace(/^\/+/, ''), root)
  url.search = request.query ? `?${request.query}` : ''
  if (url.origin !== root.origin || !url.pathname.startsWith(root.pathname)) {
    throw new Error(`The request path ${JSON.stringify(request.path)} leaves the service root.`)
  }
  if (url.href.length > MAX_SERVICE_URL_CHARS) {
    throw new ServiceError(
      `${callName(request)} was not sent: the action refuses to build a URL of ${url.href.length} characters (at most ${MAX_SERVICE_URL_CHARS}). Shorten the id it carries.`,
      { kind: 'configuration', call: callName(request) }
    )
  }
  return url
}

/**
 * "https://host:443": how messages name an address. Scheme, host and port only: a path, query,
 * fragment or user name may carry a secret.
 */
export function addressName(url: URL): string {
  return `${url.protocol}//${hostPort(url)}`
}

const DEFAULT_PORTS: Partial<Record<string, string>> = { 'https:': '443', 'http:': '80' }

/** "host:port", the port told even when it is the scheme's default (a proxy's name). */
export function hostPort(url: URL): string {
  const port = url.port || DEFAULT_PORTS[url.protocol]
  return port ? `${url.hostname}:${port}` : url.hostname
}
