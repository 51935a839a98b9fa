/**
 * What a request to the service is, where it goes and how messages name it. Pure: nothing here
 * sends anything, so a dry run prints the same requests a real run sends.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { ServiceError } from '../errors.ts'

/** The header that carries the API key; the key goes nowhere else. */
export const API_KEY_HEADER = 'X-Service-ApiKey'

export interface ServiceRequest {
  method: 'GET' | 'POST'
  /** Below the service root, percent-encoded, no leading slash: 'v1/heartbeat/a%2Fb'. */
  path: string
  /** Encoded, without '?'. */
  query?: string
  body?: string | Uint8Array
  contentType?: string
}

export interface ServiceResponse {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/**
 * The longest URL the action builds: 1000 event ids of UUID length fit in a tenth of it, so a
 * longer one is a mistake to name, not to send.
 */
export const MAX_SERVICE_URL_CHARS = 400_000

/** "POST /v2/change": the call's name in messages (below the service root, without the query). */
export function callName(request: ServiceRequest): string {
  return `${request.method} /${request.path}`
}

/** The request's URL below the service root (the base-url setting: https, ending in '/'). */
export function requestUrl(root: URL, request: ServiceRequest): URL {
  const url = new URL(request.path, root)
  url.search = request.query ?? ''
  if (url.href.length > MAX_SERVICE_URL_CHARS) {
    throw new ServiceError(
      `${callName(request)} was not sent: a URL of ${url.href.length} characters is too long (at most ${MAX_SERVICE_URL_CHARS}). Shorten the id it carries.`,
      { kind: 'configuration', call: callName(request) }
    )
  }
  return url
}

const DEFAULT_PORTS: Partial<Record<string, string>> = { 'https:': '443', 'http:': '80' }

/** "host:port", the port told even when it is the scheme's default (a proxy's name). */
export function hostPort(url: URL): string {
  const port = url.port || DEFAULT_PORTS[url.protocol]
  return port ? `${url.hostname}:${port}` : url.hostname
}
