/**
 * What the main step leaves the post step (core.saveState reaches it as STATE_<name>): never an
 * input, only the start time. It imports nothing, so that a post step with nothing to do knows
 * it before it loads the toolkit.
 */

/** Saved first by every main step, so that the post step knows it is one (as actions/checkout does). */
export const IS_POST_STATE = 'isPost'
/** Saved by a `record-at: job-end` main step once its inputs and key check passed. */
export const JOB_END_STATE = 'jobEnd'

/** What a job-end main step saves: when it ran, in milliseconds since the epoch. */
export interface JobEndState {
  startedAt: number
}

/** Whether this process is the post step: the main step saved IS_POST_STATE. */
export function isPostStep(env: Record<string, string | undefined>): boolean {
  return env[`STATE_${IS_POST_STATE}`] === 'true'
}

/** The job-end state saved by the main step, or undefined when it saved none (or a broken one). */
export function readJobEndState(env: Record<string, string | undefined>): JobEndState | undefined {
  const saved = env[`STATE_${JOB_END_STATE}`]
  if (!saved) return undefined
  try {
    const { startedAt } = (JSON.parse(saved) ?? {}) as { startedAt?: unknown }
    return Number.isSafeInteger(startedAt) && (startedAt as number) > 0
      ? { startedAt: startedAt as number }
      : undefined
  } catch {
    return undefined
  }
}

export function jobEndStateText(state: JobEndState): string {
  return JSON.stringify({ startedAt: state.startedAt })
}
