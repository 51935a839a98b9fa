import { CONTROL_CHARACTER, describeCharacter, refusal } from './parsers.ts'
import { Inputs } from '../settings.ts'

const EXAMPLE_BASE_URL = 'https://api.example.com/'
const ACCEPTED = `an absolute HTTPS URL such as ${EXAMPLE_BASE_URL}`
/** scheme://[userinfo@]host[:port], read loosely, for naming a value the URL parser refuses. */
const LOOSE_AUTHORITY =
  /^([a-z][a-z0-9+.-]*):\/\/(?:[^/?#]*@)?(\[[^\]/?#]*\]|[^/?#:@]*)(?::(\d*))?/i

/**
 * Ends in "/" so that endpoint paths resolve below any prefix. Messages name the value by scheme,
 * host and port only: a user name, password, query or fragment may hold a secret.
 */
export function parseBaseUrl(raw: string): URL {
  const value = raw.trim()
  const refuse = (problem: string): never => {
    throw refusal(Inputs.BaseUrl, problem)
  }
  if (value === '') refuse(`is required: the service's address, ${ACCEPTED}.`)
  const shown = describeAddress(value)
  // The URL parser silently drops tabs and line breaks; refuse them instead of guessing.
  const control = value.search(CONTROL_CHARACTER)
  if (control !== -1) {
    refuse(
      `must be ${ACCEPTED}; it contains the control character ${describeCharacter(value, control)}.`
    )
  }
  const url = URL.parse(value) ?? refuse(`must be ${ACCEPTED}; got ${shown}.`)
  if (url.protocol === 'http:') {
    refuse(
      `must use HTTPS: plain HTTP is refused because the API key would travel in clear text. Use https:// instead; got ${shown}.`
    )
  }
  if (url.protocol !== 'https:') refuse(`must be ${ACCEPTED} (HTTPS is required); got ${shown}.`)
  if (url.username !== '' || url.password !== '') {
    refuse(
      `must not contain a user name or password (${shown}); the service authenticates with "${Inputs.ApiKey}".`
    )
  }
  // In a parsed href "?" and "#" only delimit, even where the search is empty ("https://host/?").
  if (/[?#]/.test(url.href)) {
    refuse(
      `must not have a query (?…) or fragment (#…) (${shown}): it is the root that endpoint paths are appended to, such as ${EXAMPLE_BASE_URL}.`
    )
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/'
  return url
}

/** "https://api.example.com:8443", and nothing else of the value; described when it has no host. */
function describeAddress(value: string): string {
  const match = LOOSE_AUTHORITY.exec(value)
  if (!match || match[2] === '') return 'a value that is not a URL with a scheme and a host'
  const [, scheme, host, port] = match
  const safeHost = host.replace(/[^\p{L}\p{N}.\-[\]:_ ]/gu, '?')
  return `"${scheme.toLowerCase()}://${safeHost}${port ? `:${port}` : ''}"`
}
