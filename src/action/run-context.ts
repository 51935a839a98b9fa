/**
 * The run's context, read once: the runner's GITHUB_* variables and the event payload. `main`
 * reads it and passes it down; nothing else reads the environment.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { parseJsonSafely } from '../json.ts'

export type Env = Record<string, string | undefined>

/** The run, as the runner describes it. Blank variables are absent. */
export interface RunContext {
  readonly eventName: string
  /** The event payload: untrusted shape, {} when there is none. */
  readonly payload: unknown
  /** "owner/repo" */
  readonly repository?: string
  /** GITHUB_SHA: for a pull request the merge commit, not the head. */
  readonly sha?: string
  readonly ref?: string
  readonly refName?: string
  readonly refType?: string
  readonly actor?: string
  readonly workflow?: string
  readonly job?: string
  readonly runId?: string
  readonly runNumber?: string
  readonly runAttempt?: string
  readonly workspace?: string
  /** The web server, for links: https://github.com unless the runner says otherwise. */
  readonly serverUrl: string
  /** The REST API (…/api/v3 on Enterprise Server): https://api.github.com unless the runner says otherwise. */
  readonly apiUrl: string
}

/**
 * GitHub caps a webhook payload at 25 MB: a larger event file is not GitHub's, and reading it
 * whole would cost its size in memory. Named in the README.
 */
export const MAX_EVENT_PAYLOAD_BYTES = 25 * 1024 * 1024

const DEFAULT_SERVER_URL = 'https://github.com'
const DEFAULT_API_URL = 'https://api.github.com'

/** The context, with a warning when the event payload was there but could not be used. */
export function readRunContext(env: Env): { context: RunContext; warning?: string } {
  const { payload, problem } = readEventPayload(env['GITHUB_EVENT_PATH'])
  const context = runContextOf(env, payload)
  if (problem === undefined) return { context }
  return {
    context,
    warning: `The event payload (GITHUB_EVENT_PATH) ${problem}: it is ignored, and the change's defaults come from the runner's environment only.`
  }
}

/** The context from the environment and an already-read payload. Pure. */
export function runContextOf(env: Env, payload: unknown): RunContext {
  const value = (name: string): string | undefined => {
    const trimmed = env[name]?.trim()
    return trimmed ? trimmed : undefined
  }
  const context: RunContext = {
    eventName: value('GITHUB_EVENT_NAME') ?? '',
    payload,
    repository: value('GITHUB_REPOSITORY'),
    sha: value('GITHUB_SHA'),
    ref: value('GITHUB_REF'),
    refName: value('GITHUB_REF_NAME'),
    refType: value('GITHUB_REF_TYPE'),
    actor: value('GITHUB_ACTOR'),
    workflow: value('GITHUB_WORKFLOW'),
    job: value('GITHUB_JOB'),
    runId: value('GITHUB_RUN_ID'),
    runNumber: value('GITHUB_RUN_NUMBER'),
    runAttempt: value('GITHUB_RUN_ATTEMPT'),
    workspace: value('GITHUB_WORKSPACE'),
    serverUrl: value('GITHUB_SERVER_URL') ?? DEFAULT_SERVER_URL,
    apiUrl: value('GITHUB_API_URL') ?? DEFAULT_API_URL
  }
  return Object.freeze(
    Object.fromEntries(Object.entries(context).filter(([, v]) => v !== undefined)) as RunContext
  )
}

/**
 * The payload at `path`, read only up to MAX_EVENT_PAYLOAD_BYTES. {} when there is no path; with
 * a problem (mid-sentence) when the file is too large, unreadable or not JSON.
 */
export function readEventPayload(path: string | undefined): { payload: unknown; problem?: string } {
  if (!path) return { payload: {} }
  let text: string
  try {
    text = readBounded(path, MAX_EVENT_PAYLOAD_BYTES)
  } catch (error) {
    if (error instanceof PayloadTooLarge) {
      return {
        payload: {},
        problem: `is larger than ${MAX_EVENT_PAYLOAD_BYTES / 1024 / 1024} MiB, GitHub's own limit`
      }
    }
    const code = (error as NodeJS.ErrnoException).code ?? 'an error'
    return { payload: {}, problem: `could not be read (${code})` }
  }
  const payload = parseJsonSafely(text)
  if (payload === undefined) return { payload: {}, problem: 'is not JSON' }
  return { payload }
}

class PayloadTooLarge extends Error {}

/** The file's text, refusing before reading more than `max` bytes (the size is checked first). */
function readBounded(path: string, max: number): string {
  const fd = openSync(path, 'r')
  try {
    if (fstatSync(fd).size > max) throw new PayloadTooLarge()
    // Read until the end, not the size stat gave: the file may be a pipe, or still growing.
    let chunk = Buffer.alloc(Math.min(max + 1, Math.max(fstatSync(fd).size + 1, 64 * 1024)))
    let length = 0
    for (;;) {
      if (length === chunk.length) {
        if (chunk.length > max) throw new PayloadTooLarge()
        const grown = Buffer.alloc(Math.min(max + 1, chunk.length * 2))
        chunk.copy(grown, 0, 0, length)
        chunk = grown
      }
      const read = readSync(fd, chunk, length, chunk.length - length, null)
      if (read === 0) break
      length += read
      if (length > max) throw new PayloadTooLarge()
    }
    return chunk.toString('utf8', 0, length)
  } finally {
    closeSync(fd)
  }
}
