/** The event payload the runner writes for the run (GITHUB_EVENT_PATH). */
import { readFileSync } from 'node:fs'
import type { Env } from '../context.ts'

/** The event payload at GITHUB_EVENT_PATH; {} when there is none or it cannot be read or parsed. */
export function readEventPayload(env: Env): unknown {
  const path = env['GITHUB_EVENT_PATH']
  if (!path) return {}
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown
  } catch {
    // The payload only improves the defaults; a run without one still records its change.
    return {}
  }
}
