/** The run's context, read once by `main`: the runner's GITHUB_* variables and the event payload. */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { parseJsonSafely } from '../helpers/json.ts'
import type { Env } from '../settings.ts'

/** The run, as the runner describes it. Blank variables are undefined. */
export type RunContext = ReturnType<typeof runContextOf> & {
  /** The job's `environment:`, from its OIDC token, when main could read it. */
  readonly jobEnvironment?: string
}

/** GitHub caps a webhook payload at 25 MB: a larger event file is not GitHub's. In the README. */
export const MAX_EVENT_PAYLOAD_BYTES = 25 * 1024 * 1024

const READ_CHUNK_BYTES = 1024 * 1024

/** The context, with a warning when the event payload was there but could not be used. */
export function readRunContext(env: Env): { context: RunContext; warning?: string } {
  const { payload, problem } = readEventPayload(env['GITHUB_EVENT_PATH'])
  const warning =
    problem &&
    `The event payload (GITHUB_EVENT_PATH) ${problem}: it is ignored, and the change's defaults come from the runner's environment only.`
  return { context: runContextOf(env, payload), warning }
}

/** The context from the environment and an already-read payload. Pure. */
export function runContextOf(env: Env, payload: unknown) {
  const value = (name: string): string | undefined => env[name]?.trim() || undefined
  // Each root without a trailing "/", for links and the API's base URL alike (…/api/v3 on GHES).
  const root = (name: string, fallback: string): string =>
    (value(name) ?? fallback).replace(/\/+$/, '')
  return Object.freeze({
    eventName: value('GITHUB_EVENT_NAME') ?? '',
    /** Untrusted shape; {} when there is none. */
    payload,
    repository: value('GITHUB_REPOSITORY'),
    /** For a pull request the merge commit, not the head. */
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
    serverUrl: root('GITHUB_SERVER_URL', 'https://github.com'),
    apiUrl: root('GITHUB_API_URL', 'https://api.github.com')
  })
}

/** The payload at `path`; {} when none, with a problem (mid-sentence) when it cannot be used. */
export function readEventPayload(path: string | undefined): { payload: unknown; problem?: string } {
  if (!path) return { payload: {} }
  let text: string | undefined
  try {
    text = readBounded(path, MAX_EVENT_PAYLOAD_BYTES)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'an error'
    return { payload: {}, problem: `could not be read (${code})` }
  }
  if (text === undefined) {
    const mib = MAX_EVENT_PAYLOAD_BYTES / 1024 / 1024
    return { payload: {}, problem: `is larger than ${mib} MiB, GitHub's own limit` }
  }
  const payload = parseJsonSafely(text)
  return payload === undefined ? { payload: {}, problem: 'is not JSON' } : { payload }
}

/** The text, or undefined past `max` bytes: a pipe or a growing file is read only that far. */
function readBounded(path: string, max: number): string | undefined {
  const fd = openSync(path, 'r')
  try {
    if (fstatSync(fd).size > max) return undefined
    const chunks: Buffer[] = []
    let length = 0
    for (let read = -1; read !== 0 && length <= max; length += read) {
      const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES)
      read = readSync(fd, chunk, 0, chunk.length, null)
      chunks.push(chunk.subarray(0, read))
    }
    return length > max ? undefined : Buffer.concat(chunks, length).toString('utf8')
  } finally {
    closeSync(fd)
  }
}
