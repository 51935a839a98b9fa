/**
 * What the main step leaves the post step, read back as STATE_<name>: never an input or a secret,
 * only the start time and the job's environment when the main step read it. Imports only the
 * check of an environment's name and a JSON parse, so that the post step decides before it loads
 * anything.
 */
import { parseJsonSafely } from '../helpers/json.ts'
import type { Env } from '../settings.ts'
import { environmentName } from './job-environment.ts'

/** Saved first by every main step, so that the post step knows it is one (as actions/checkout does). */
export const IS_POST_STATE = 'isPost'
/** Saved by a `record-at: job-end` main step that lets the deploy go on. */
export const JOB_END_STATE = 'jobEnd'
/** A saved start older than this is not this job's: self-hosted jobs run at most 5 days. */
export const MAX_JOB_START_AGE_MS = 6 * 24 * 60 * 60 * 1000

/**
 * The main step's start (ms since the epoch), or why it cannot be used (mid-sentence), and the
 * job's environment from its OIDC token, so that the post step need not ask for one again.
 */
export type JobEndState = { startedAt?: number; problem?: string; environment?: string }

export function isPostStep(env: Env): boolean {
  return env[`STATE_${IS_POST_STATE}`] === 'true'
}

/** Undefined when the main step saved no job-end state: nothing to do. */
export function readJobEndState(env: Env): JobEndState | undefined {
  const saved = env[`STATE_${JOB_END_STATE}`]
  if (!saved) return undefined
  // Unreadable JSON is {}: its missing start is said below.
  const { startedAt, environment } = (parseJsonSafely(saved) ?? {}) as Record<string, unknown>
  const start =
    typeof startedAt === 'number' && Number.isSafeInteger(startedAt)
      ? { startedAt }
      : { problem: 'the start the main step saved cannot be read' }
  // Checked as outside text, though the main step wrote it: an unusable name is left out.
  return { ...start, environment: environmentName(environment) }
}

/** The saved start, unless it cannot be this job's: after `now`, or more than 6 days before. */
export function checkedStart(state: JobEndState, now: number): JobEndState {
  const { startedAt } = state
  if (startedAt === undefined) return state
  if (startedAt > now) return { problem: "the start the main step saved is after the post step's" }
  if (now - startedAt > MAX_JOB_START_AGE_MS) {
    return { problem: 'the start the main step saved is more than 6 days old, older than any job' }
  }
  return state
}

export function jobEndStateText(startedAt: number, environment?: string): string {
  return JSON.stringify({ startedAt, environment })
}
