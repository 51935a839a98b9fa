/**
 * The job's environment from its OIDC token, as the bundled action gets it from the runner: a
 * token endpoint on loopback (ACTIONS_ID_TOKEN_REQUEST_URL, answering a GET that carries the
 * request token as a bearer with `{"value": "<jwt>"}`), and the emulator as the service. When it
 * is asked for, what the state carries to a post step and an answer without a token: main.test.ts
 * and action/runner.test.ts, in process.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Emulator } from '../../emulator/emulator.ts'
import { testCertificate } from '../../emulator/tls.ts'
import { ACTION_NAME } from '../../src/package.ts'
import { jwtWith } from '../support/jwt.ts'
import { actionAgainst, type ActionRun } from '../support/run-action.ts'

const REQUEST_TOKEN = 'runner-request-token-0000'
const TOKEN = jwtWith({ environment: 'production', sub: 'repo:octo-org/octo-repo' })

let emulator: Emulator
let action: ReturnType<typeof actionAgainst>
let endpoint: Server
/** The requests the token endpoint received: their path and query, and their Authorization. */
let requests: Array<{ url: string; authorization?: string }>
/** Whether the endpoint holds each request open, never answering, instead of giving the token. */
let hang: boolean
/** The variables the runner sets for a job with `permissions: id-token: write`. */
let oidcEnv: Record<string, string>

beforeAll(async () => {
  emulator = await Emulator.start()
  action = actionAgainst(emulator, (await testCertificate()).certPath)
  endpoint = createServer((request, response) => {
    requests.push({ url: request.url ?? '', authorization: request.headers.authorization })
    if (hang) return
    const allowed =
      request.method === 'GET' && request.headers.authorization === `Bearer ${REQUEST_TOKEN}`
    response.writeHead(allowed ? 200 : 401, { 'content-type': 'application/json' })
    response.end(allowed ? JSON.stringify({ value: TOKEN }) : '{"message":"denied"}')
  })
  await new Promise<void>(done => endpoint.listen(0, '127.0.0.1', done))
  const { port } = endpoint.address() as AddressInfo
  oidcEnv = {
    ACTIONS_ID_TOKEN_REQUEST_URL: `http://127.0.0.1:${port}/token?api-version=2.0`,
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: REQUEST_TOKEN
  }
})
afterAll(async () => {
  endpoint.closeAllConnections()
  await new Promise(done => endpoint.close(done))
  await emulator.close()
})
beforeEach(() => {
  emulator.reset()
  requests = []
  hang = false
})

function changeSent(): Record<string, unknown> {
  const [request] = emulator.requestsTo('POST /v2/change')
  return JSON.parse(request.body) as Record<string, unknown>
}

/** Everything the step wrote where it could be read later, but the runner's masking commands. */
function written(run: ActionRun): string {
  const stdout = run.stdout
    .split('\n')
    .filter(line => !line.startsWith('::add-mask::'))
    .join('\n')
  return [
    stdout,
    run.stderr,
    JSON.stringify(run.outputs),
    run.summary,
    JSON.stringify(run.state)
  ].join('\n')
}

describe('a job that may ask for an OIDC token', () => {
  it('records the change with the token’s environment, and the token goes nowhere', async () => {
    const run = await action({}, { env: oidcEnv })
    expect(run.exitCode).toBe(0)
    expect(requests).toEqual([
      {
        url: `/token?api-version=2.0&audience=${ACTION_NAME}`,
        authorization: `Bearer ${REQUEST_TOKEN}`
      }
    ])
    expect(changeSent()['environment']).toBe('production')
    expect(run.stdout).toContain(`::add-mask::${TOKEN}`)
    expect(run.stdout).toContain(
      `Environment "production" from the job's OIDC token (its environment claim).`
    )
    expect(written(run)).not.toContain(TOKEN)
    expect(JSON.stringify(emulator.requests)).not.toContain(TOKEN)
  })

  it('still records the change when the endpoint holds the request and never answers', async () => {
    hang = true
    // Without the request stopped, the step would wait minutes on it; this kills it sooner.
    const run = await action({}, { env: oidcEnv, timeoutMs: 25_000 })
    expect(requests).toHaveLength(1)
    expect(run.signal).toBeNull()
    expect(run.exitCode).toBe(0)
    expect(changeSent()).not.toHaveProperty('environment')
    expect(run.stdout).not.toContain('Environment "')
    expect(run.stdout).not.toMatch(/ECONNRESET|retry/)
    expect(run.stdout).toMatch(/^::debug::No environment from the job's OIDC token: /m)
  })
})
