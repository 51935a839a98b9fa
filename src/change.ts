/**
 * The change's defaults and the one merge of the user's fields over them, giving the body of
 * POST /v2/change. Everything that suggests a value (the run's context, what the change ships,
 * one service of several, the deploy's outcome) enters as a default; the user's value wins, here
 * and nowhere else.
 */
import { isJsonObject } from './json.ts'
import type { ChangeRequest } from './service/client.ts'

/** The change fields the user gave. Each is undefined when its input is empty. */
export interface ChangeFields {
  description?: string
  environment?: string
  service?: string
  version?: string
  user?: string
  comment?: string
  team?: string
  /** Trimmed, without empties or duplicates, in the order given. */
  labels?: string[]
  /** The parsed custom-metadata JSON value. */
  customMetadata?: unknown
  /** Integer Unix seconds. */
  createdAt?: number
}

/** The run's GitHub context, sent in custom_metadata under "github". Fields with no value are omitted. */
export interface GithubMetadata {
  repository?: string
  /** The commit the change is about (the resolved version), not always GITHUB_SHA. */
  sha?: string
  ref?: string
  event_name?: string
  workflow?: string
  job?: string
  run_id?: string
  run_number?: string
  run_attempt?: string
  run_url?: string
  actor?: string
  pull_request?: number
  /** What a lookup or a service selection adds (commits, compare_url, changed_paths…). */
  [key: string]: unknown
}

/** What the run suggests for a change, before the user's fields are merged over it. */
export interface ChangeDefaults {
  service?: string
  version?: string
  user?: string
  environment?: string
  /** Never empty. */
  description: string
  /**
   * The default top-level keys of custom_metadata: "github" (sent unless github-metadata is
   * false) and any other the run adds; the user's keys win over these.
   */
  metadata: { github?: GithubMetadata; [key: string]: unknown }
  /** Unix seconds: when the deploy began, when the change is recorded after it. */
  createdAt?: number
}

/**
 * The user's fields over the defaults. Fields that end up empty are absent from the result (not
 * present as undefined), so the service applies its own defaults.
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
    created_at: fields.createdAt ?? defaults.createdAt
  }
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) Object.assign(request, { [key]: value })
  }
  return request
}

/**
 * The default metadata with the user's object merged over it (their keys win). A user value that
 * is not an object cannot hold the defaults, so it is sent as given.
 */
function customMetadata(
  userValue: unknown,
  defaults: ChangeDefaults,
  includeGithubMetadata: boolean
): string | undefined {
  const { github, ...others } = defaults.metadata
  const base = includeGithubMetadata && github !== undefined ? { github, ...others } : others
  if (userValue !== undefined && !isJsonObject(userValue)) return JSON.stringify(userValue)
  // Spread, not Object.assign: a user key named "__proto__" stays a plain key.
  if (userValue === undefined && Object.keys(base).length === 0) return undefined
  return JSON.stringify({ ...base, ...(userValue ?? {}) })
}

/** The value, unless it is missing or blank. Never altered: the user's text is sent as written. */
function present(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value : undefined
}
