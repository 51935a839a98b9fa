/**
 * The job's environment (`environment:` in the workflow), which the runner names in no variable:
 * only the `environment` claim of the job's OIDC token carries it. Nothing of the token is
 * verified, since it only names the environment; the token itself is masked and goes no further.
 * Imports only text.ts and json.ts, so that the post step can check a saved environment before
 * loading more.
 */
import { parseJsonSafely } from '../helpers/json.ts'
import type { Redactor } from '../redact.ts'
import { hasUnsafeCharacter } from '../helpers/text.ts'
import type { IdTokenEndpoint, Runner } from './runner.ts'

/** The most the token request may delay a step; past it the change goes on without. In the README. */
export const JOB_ENVIRONMENT_BUDGET_MS = 2000
/** GitHub's own limit on an environment's name. */
const MAX_ENVIRONMENT_CHARS = 255

/** The job's environment from a token for this audience, or why there is none (mid-sentence). */
export async function readJobEnvironment(
  runner: Pick<Runner, 'getIDToken' | 'setSecret'>,
  redactor: Redactor,
  endpoint: IdTokenEndpoint,
  audience: string,
  budgetMs = JOB_ENVIRONMENT_BUDGET_MS // tests give less
): Promise<{ environment: string } | { problem: string }> {
  const budget = AbortSignal.timeout(budgetMs)
  const overBudget = new Promise<never>((_, reject) =>
    budget.addEventListener('abort', () => reject(new Error('no token came in time')))
  )
  let token: string
  try {
    token = await Promise.race([runner.getIDToken(endpoint, audience, budget), overBudget])
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) }
  }
  runner.setSecret(token)
  redactor.add(token)
  const environment = environmentClaim(token)
  return environment === undefined
    ? { problem: 'the token has no usable environment claim' }
    : { environment }
}

/** The `environment` claim of a JWT (its payload is the base64url middle part), when usable. */
export function environmentClaim(token: string): string | undefined {
  const parts = token.split('.')
  if (parts.length !== 3) return undefined
  const claims = parseJsonSafely(Buffer.from(parts[1], 'base64url'))
  return environmentName((claims as { environment?: unknown } | null | undefined)?.environment)
}

/**
 * The value, when it can be an environment's name: a non-blank string of at most 255 characters
 * with no control, line-breaking or bidi character. It is outside text, whatever carried it.
 */
export function environmentName(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined
  if (value.length > MAX_ENVIRONMENT_CHARS || hasUnsafeCharacter(value)) return undefined
  return value
}
