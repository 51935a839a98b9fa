/** The user's change fields and the Git context's defaults -> the body of POST /v2/change. */
import type { ChangeDefaults } from './context.ts'
import type { ChangeFields } from './action/settings.ts'
import { isJsonObject } from './json.ts'

/** The body of POST /v2/change, as the service interface defines it. */
export interface ChangeRequest {
  description: string
  environment?: string
  service?: string
  version?: string
  user?: string
  comment?: string
  team?: string
  /** Comma-separated. */
  labels?: string
  /** A JSON document, carried as a string. */
  custom_metadata?: string
  /** Unix epoch seconds; the service uses the current time when omitted. */
  created_at?: number
}

/**
 * What the user gave wins over what the context suggests. Fields that end up empty are absent
 * from the result (not present as undefined), so the service applies its own defaults.
 */
export function buildChangeRequest(
  fields: ChangeFields,
  defaults: ChangeDefaults,
  includeGithubMetadata: boolean
): ChangeRequest {
  const request: ChangeRequest = {
    description: present(fields.description) ?? defaults.description
  }
  // In the interface's order, so the body reads the way the service documents it.
  const optional: Omit<ChangeRequest, 'description'> = {
    environment: present(fields.environment) ?? present(defaults.environment),
    service: present(fields.service) ?? present(defaults.service),
    version: present(fields.version) ?? present(defaults.version),
    user: present(fields.user) ?? present(defaults.user),
    comment: present(fields.comment),
    team: present(fields.team),
    labels: present(fields.labels?.join(',')),
    custom_metadata: customMetadata(fields.customMetadata, defaults, includeGithubMetadata),
    created_at: fields.createdAt
  }
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) Object.assign(request, { [key]: value })
  }
  return request
}

/**
 * The run's GitHub metadata under "github", with the user's object merged over it (their keys
 * win). A user value that is not an object cannot hold the metadata, so it is sent as given.
 */
function customMetadata(
  userValue: unknown,
  defaults: ChangeDefaults,
  includeGithubMetadata: boolean
): string | undefined {
  if (!includeGithubMetadata) {
    return userValue === undefined ? undefined : JSON.stringify(userValue)
  }
  if (userValue === undefined) return JSON.stringify({ github: defaults.github })
  if (!isJsonObject(userValue)) return JSON.stringify(userValue)
  // Spread, not Object.assign: a user key named "__proto__" stays a plain key.
  return JSON.stringify({ github: defaults.github, ...userValue })
}

/** The value, unless it is missing or blank. Never altered: the user's text is sent as written. */
function present(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value : undefined
}
