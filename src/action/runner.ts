/**
 * The runner, through @actions/core, and its OIDC token endpoint. Nothing here makes text safe:
 * the report does, before.
 */
import { randomUUID } from 'node:crypto'
import { appendFileSync } from 'node:fs'
import * as http from 'node:http'
import * as https from 'node:https'
import { EOL } from 'node:os'
import type { Duplex } from 'node:stream'
import * as core from '@actions/core'
import { getProxyUrl } from '@actions/http-client/lib/proxy'
import { parseJsonSafely } from '../helpers/json.ts'
import type { Renderer } from '../report.ts'

/** Everything the action says to the runner goes through one of these; tests replace it. */
export interface Runner extends Renderer {
  /** The raw input, as the runner passes it (INPUT_<NAME>), trimmed. Empty when not given. */
  getInput(name: string): string
  setSecret(secret: string): void
  /** Saves a value for the post step, which reads it as STATE_<name>. Never a secret. */
  saveState(name: string, value: string): void
  /**
   * The job's OIDC token for this audience, a non-empty string: rejects, saying why mid-sentence,
   * when the endpoint gives none. Once `signal` aborts, its request and sockets are destroyed.
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

/**
 * Asks for the token as core does (GET the URL with `&audience=`, the request token as a bearer,
 * `{"value": "<jwt>"}` back), through the proxy core would choose (@actions/http-client's rules),
 * but with node:http(s) itself: a redirect is an answer like any other, never followed, so the
 * request token reaches no other origin; the answer is read up to MAX_ID_TOKEN_ANSWER_BYTES; and
 * every socket ends with the request, a proxy tunnel's pending one included.
 */
const requestIdToken: Runner['getIDToken'] = async (endpoint, audience, signal) => {
  const url = new URL(`${endpoint.url}&audience=${encodeURIComponent(audience)}`)
  const client = url.protocol === 'https:' ? https : http
  const proxy = getProxyUrl(url)?.href
  const proxyEnv = proxy ? { [client === https ? 'HTTPS_PROXY' : 'HTTP_PROXY']: proxy } : {}
  const agent = new client.Agent({ proxyEnv })
  // Each socket it opens: Node hands a request a tunnel's socket only once the proxy answers.
  const sockets: Duplex[] = []
  const connect = agent.createConnection.bind(agent)
  agent.createConnection = (options, callback) => {
    const socket = connect(options, callback)
    if (socket) sockets.push(socket)
    return socket
  }
  const headers = { Authorization: `Bearer ${endpoint.requestToken}`, Accept: 'application/json' }
  return new Promise((resolve, reject) => {
    const settle = (token: string | undefined, problem: string): void => {
      signal.removeEventListener('abort', stop)
      request.destroy()
      for (const socket of sockets) socket.destroy()
      if (token) resolve(token)
      else reject(new Error(problem))
    }
    const stop = (): void => settle(undefined, 'the token request was stopped')
    const failed = (error: Error): void =>
      settle(undefined, `the token request failed: ${error.message}`)
    const request = client.get(url, { agent, headers }, response => {
      response.on('error', failed)
      const status = response.statusCode ?? 0
      if (status < 200 || status > 299) {
        const redirect = status >= 300 && status < 400 ? ', a redirect, which is not followed' : ''
        return settle(undefined, `the token endpoint answered HTTP ${status}${redirect}`)
      }
      const chunks: Buffer[] = []
      let received = 0
      response.on('data', (chunk: Buffer) => {
        received += chunk.byteLength
        if (received > MAX_ID_TOKEN_ANSWER_BYTES) return settle(undefined, TOO_LARGE)
        chunks.push(chunk)
      })
      response.on('end', () => {
        const { value } = (parseJsonSafely(Buffer.concat(chunks)) ?? {}) as { value?: unknown }
        settle(typeof value === 'string' ? value : undefined, NO_TOKEN_VALUE)
      })
    })
    request.on('error', failed)
    signal.addEventListener('abort', stop)
  })
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
const TOO_LARGE = `the token endpoint's answer is over ${MAX_ID_TOKEN_ANSWER_BYTES / 1024} KiB`
