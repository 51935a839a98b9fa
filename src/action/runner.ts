/**
 * The runner, through @actions/core, and its OIDC token endpoint. Nothing here makes text safe:
 * the report does, before.
 */
import { randomUUID } from 'node:crypto'
import { appendFileSync } from 'node:fs'
import { EOL } from 'node:os'
import * as core from '@actions/core'
import { parseJsonSafely } from '../helpers/json.ts'
import { formatSeconds } from '../helpers/text.ts'
import type { Renderer } from '../report.ts'
import { Route, type RequestOutcome } from '../service/bounded-request.ts'

/** Everything the action says to the runner goes through one of these; tests replace it. */
export interface Runner extends Renderer {
  /** The raw input, as the runner passes it (INPUT_<NAME>), trimmed. Empty when not given. */
  getInput(name: string): string
  setSecret(secret: string): void
  /** Saves a value for the post step, which reads it as STATE_<name>. Never a secret. */
  saveState(name: string, value: string): void
  /**
   * The job's OIDC token for this audience, a non-empty string: rejects, saying why mid-sentence,
   * when the endpoint gives none. Once `signal` aborts, or after ID_TOKEN_DEADLINE_MS, its request
   * and sockets are destroyed.
   */
  getIDToken(endpoint: IdTokenEndpoint, audience: string, signal: AbortSignal): Promise<string>
}

/** Where a job with `permissions: id-token: write` asks for its OIDC token, as the runner says. */
export interface IdTokenEndpoint {
  /** ACTIONS_ID_TOKEN_REQUEST_URL, with its query (api-version). */
  url: string
  /** ACTIONS_ID_TOKEN_REQUEST_TOKEN: sent as a bearer, to the origin of `url` only. */
  requestToken: string
}

/** A token is a few KiB: a larger answer is no token, and is not read further. */
export const MAX_ID_TOKEN_ANSWER_BYTES = 64 * 1024
/** The token request as a whole, however long its caller would wait: the endpoint is quick. */
const ID_TOKEN_DEADLINE_MS = 10_000

/**
 * Asks for the token as core does (GET the URL with `&audience=`, the request token as a bearer,
 * `{"value": "<jwt>"}` back), through the proxy core would choose (@actions/http-client's rules),
 * with the program's one bounded request: a redirect is an answer like any other, never followed,
 * so the request token reaches no other origin; the answer is read up to
 * MAX_ID_TOKEN_ANSWER_BYTES; and every socket ends with the request, a proxy tunnel's pending one
 * included.
 */
export async function requestIdToken(
  endpoint: IdTokenEndpoint,
  audience: string,
  signal: AbortSignal,
  deadlineMs = ID_TOKEN_DEADLINE_MS // tests give less
): Promise<string> {
  const url = new URL(`${endpoint.url}&audience=${encodeURIComponent(audience)}`)
  const headers = { Authorization: `Bearer ${endpoint.requestToken}`, Accept: 'application/json' }
  const route = new Route(url)
  const outcome = await route.request(url, {
    method: 'GET',
    headers,
    deadlineMs,
    maxAnswerBytes: MAX_ID_TOKEN_ANSWER_BYTES,
    signal
  })
  route.close()
  if (outcome.type !== 'status') throw new Error(noAnswer(outcome))
  const { status, body } = outcome.response
  if (status < 200 || status > 299) {
    const redirect = status >= 300 && status < 400 ? ', a redirect, which is not followed' : ''
    throw new Error(`the token endpoint answered HTTP ${status}${redirect}`)
  }
  const { value } = (parseJsonSafely(body) ?? {}) as { value?: unknown }
  if (typeof value !== 'string' || value === '') throw new Error(NO_TOKEN_VALUE)
  return value
}

/** Why a token request got no answer, mid-sentence. */
function noAnswer(outcome: Exclude<RequestOutcome, { type: 'status' }>): string {
  switch (outcome.type) {
    case 'too-large':
      return `the token endpoint's answer is over ${outcome.capBytes / 1024} KiB`
    case 'timeout':
      return `the token endpoint gave no complete answer within ${formatSeconds(outcome.deadlineMs)}`
    case 'stopped':
      return 'the token request was stopped'
    case 'error':
      return `the token request failed: ${outcome.error.message}`
  }
}

export const githubRunner: Runner = {
  getInput: name => core.getInput(name),
  setSecret: secret => core.setSecret(secret),
  setOutput: (name, value) => core.setOutput(name, value),
  setOutputLines: (name, lines) => {
    const file = process.env['GITHUB_OUTPUT']
    // Without the runner's output file (an older or a local runner) core gets the value whole.
    if (!file) return core.setOutput(name, [...lines].join('\n'))
    // The runner's multi-line form (name<<DELIMITER … DELIMITER), as core writes it, line by line.
    const delimiter = `ghadelimiter_${randomUUID()}`
    appendFileSync(file, `${name}<<${delimiter}${EOL}`)
    for (const line of lines) {
      if (line.includes(delimiter)) throw new Error(`The ${name} output contains its delimiter.`)
      appendFileSync(file, `${line}${EOL}`)
    }
    appendFileSync(file, `${delimiter}${EOL}`)
  },
  info: message => core.info(message),
  debug: message => core.debug(message),
  notice: message => core.notice(message),
  warning: message => core.warning(message),
  error: message => core.error(message),
  setFailed: message => core.setFailed(message),
  saveState: (name, value) => core.saveState(name, value),
  appendSummary: async markdown => {
    // Without a summary file core.summary.write() throws; a run without one has no summary.
    if (!process.env['GITHUB_STEP_SUMMARY']) return
    await core.summary.addRaw(markdown, true).write()
  },
  getIDToken: requestIdToken
}

const NO_TOKEN_VALUE = `the token endpoint's answer has no token (a "value" that is a non-empty string)`
