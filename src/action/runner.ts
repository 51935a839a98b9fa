/** The runner, through @actions/core. Nothing here makes text safe: the report does, before. */
import { randomUUID } from 'node:crypto'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { ClientRequest } from 'node:http'
import { appendFileSync } from 'node:fs'
import { EOL } from 'node:os'
import * as core from '@actions/core'

/** Everything the action says to the runner goes through one of these; tests replace it. */
export interface Runner {
  /** The raw input, as the runner passes it (INPUT_<NAME>), trimmed. Empty when not given. */
  getInput(name: string): string
  setSecret(secret: string): void
  setOutput(name: string, value: string): void
  /** An output of these lines, written one by one: 100,000 event ids are never one string. */
  setOutputLines(name: string, lines: Iterable<string>): void
  info(message: string): void
  /** A line shown only when the run's debug logging is on. */
  debug(message: string): void
  notice(message: string): void
  warning(message: string): void
  /** An error annotation that does not fail the step. */
  error(message: string): void
  /** An error annotation, and a failing exit code. */
  setFailed(message: string): void
  /** Appends markdown to the job summary, when the runner offers one. */
  appendSummary(markdown: string): Promise<void>
  /** Saves a value for the post step, which reads it as STATE_<name>. Never a secret. */
  saveState(name: string, value: string): void
  /**
   * The job's OIDC token for this audience (ACTIONS_ID_TOKEN_REQUEST_URL): rejects when the job
   * may not have one. Once `signal` aborts, its requests are destroyed.
   */
  getIDToken(audience: string, signal: AbortSignal): Promise<string>
}

/** Published by Node for every HTTP(S) request a client creates. */
const REQUEST_CREATED = 'http.client.request.created'
/** The User-Agent of core's OIDC client: its requests, and no other, are the token's. */
const OIDC_CLIENT_USER_AGENT = 'actions/oidc-client'

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
  getIDToken: async (audience, signal) => {
    // Core's HTTP client takes no timeout and no signal, and a request left waiting would hold the
    // step open: the requests it creates are stopped here when the signal aborts.
    const requests: ClientRequest[] = []
    const stop = (): void => requests.forEach(request => request.destroy())
    const track = (message: unknown): void => {
      const { request } = message as { request: ClientRequest }
      if (request.getHeader('user-agent') !== OIDC_CLIENT_USER_AGENT) return
      requests.push(request)
      if (signal.aborted) stop()
    }
    subscribe(REQUEST_CREATED, track)
    signal.addEventListener('abort', stop)
    try {
      return await core.getIDToken(audience)
    } finally {
      unsubscribe(REQUEST_CREATED, track)
      signal.removeEventListener('abort', stop)
    }
  }
}
