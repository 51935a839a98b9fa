/**
 * Outside text of half a megabyte and a megabyte, on every way it comes in, in process: each run
 * ends (the redaction of such text once took minutes, in the square of its length), and a URL's
 * password placed in the same text never shows, nor reaches the service.
 */
import { describe, expect, it } from '@jest/globals'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Emulator } from '../emulator/emulator.ts'
import { run } from '../src/main.ts'
import { REPOSITORY, RUN_ID, sha, TOKEN, useFakeGitHub } from './shipped/fake-github.ts'
import { FakeRunner } from './support/fake-runner.ts'
import { runnerContext } from './support/run-action.ts'
import { useEmulator } from './support/use-emulator.ts'

/** A run's own version and repository: a change needs both. */
const CONTEXT = { GITHUB_SHA: 'a1b2c3d'.padEnd(40, '0'), GITHUB_REPOSITORY: 'octo-org/octo-repo' }

let emulator: Emulator
useEmulator(started => {
  emulator = started
})
const github = useFakeGitHub()

const PASSWORD = 'hunter2-pw'
/**
 * `a.a.…a://x`, of `bytes` characters, after a URL with a password: "a://" is where a scheme's
 * pattern would stop, and every "." a word boundary where it could start again.
 */
function hostile(bytes: number): string {
  const url = `https://bot:${PASSWORD}@git.example/ `
  return `${url}${'a.'.repeat(Math.ceil((bytes - url.length - 5) / 2))}a://x`
}
const SIZES = [
  ['512 KiB', 512 * 1024],
  ['1 MiB', 1024 * 1024]
] as const

function runner(inputs: Record<string, string> = {}): FakeRunner {
  return new FakeRunner({
    'api-key': emulator.apiKey,
    'base-url': emulator.url,
    'max-attempts': '1',
    'include-commits': 'false',
    ...inputs
  })
}

/** Everything the run said, wrote or sent. */
function everything(r: FakeRunner): string {
  const said = [r.lines, r.notices, r.warnings, r.errors, r.failures, r.debugs].flat()
  const sent = emulator.requests.map(request => request.body)
  return [...said, ...Object.values(r.outputs), r.summary, ...sent].join('\n')
}

function expectNoPassword(r: FakeRunner): void {
  const all = everything(r)
  expect(all).not.toContain(PASSWORD)
  expect(all).not.toContain(PASSWORD.slice(0, 6))
}

describe.each(SIZES)('outside text of %s', (_size, bytes) => {
  const text = hostile(bytes)

  it('in a change read back: outputs it whole, shows a part, the password nowhere', async () => {
    const change = { id: 'c-1', service: 's', version: 'v', description: text }
    emulator.inject('GET /v2/change/*', { status: 200, body: JSON.stringify(change) })
    const r = runner({ command: 'get-change', 'change-id': 'c-1' })
    await run(r, CONTEXT)
    expect(r.failures).toEqual([])
    const output = JSON.parse(r.outputs['change']) as { description: string }
    // Compared as a boolean: a failure should not print a megabyte.
    expect(output.description === text.replace(`bot:${PASSWORD}`, '***')).toBe(true)
    expect(r.summary.length).toBeLessThan(10_000)
    expectNoPassword(r)
  })

  it.each([
    ['a JSON error', (t: string) => JSON.stringify({ error: t })],
    ['a text body', (t: string) => t]
  ])('in a 4XX answer, as %s: one short failure', async (_kind, body) => {
    emulator.inject('POST /v2/change', { status: 400, body: body(text) })
    const r = runner()
    await run(r, CONTEXT)
    expect(r.failures).toHaveLength(1)
    expect(r.failures[0]).toMatch(/^POST \/v2\/change was rejected with HTTP 400 Bad Request: /)
    expect(r.failures[0].length).toBeLessThan(1000)
    expectNoPassword(r)
  })

  it('in a 503 answer to every attempt: an outage warning, after each attempt', async () => {
    emulator.inject('POST /v2/change', { status: 503, body: text }, Infinity)
    const r = runner({ 'max-attempts': '2' })
    await run(r, CONTEXT)
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(2)
    expect(r.failures).toEqual([])
    expect(r.warnings.join('\n')).toMatch(/failed with HTTP 503 Service Unavailable after 2/)
    expectNoPassword(r)
  })

  it('in a GitHub API error message: one lookup warning, and the change recorded', async () => {
    const forbidden = { status: 403, body: JSON.stringify({ message: text }) }
    github().inject('GET /repos/*/*/actions/runs/*', forbidden, Infinity)
    const r = runner({ 'github-token': TOKEN, 'include-commits': 'true' })
    await run(r, {
      ...CONTEXT,
      ...runnerContext(tmpdir()),
      GITHUB_EVENT_NAME: 'workflow_dispatch',
      GITHUB_REPOSITORY: REPOSITORY,
      GITHUB_SHA: sha(12),
      GITHUB_RUN_ID: RUN_ID,
      GITHUB_API_URL: github().url
    })
    expect(r.failures).toEqual([])
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(1)
    const lookup = r.warnings.filter(line => line.startsWith('Could not look up'))
    expect(lookup).toHaveLength(1)
    expect(lookup[0]).toContain('answered HTTP 403')
    expectNoPassword(r)
  })

  it('in an event-results answer: outputs it, the password nowhere', async () => {
    const results = { results: [{ id: 'e-1', status: 'error', message: text }] }
    emulator.inject('GET /v2/event_results', { status: 200, body: JSON.stringify(results) })
    const r = runner({ command: 'event-results', 'event-ids': 'e-1' })
    await run(r, CONTEXT)
    expect(r.failures).toEqual([])
    expect(r.outputs['event-results']).toContain('https://***@git.example/')
    expectNoPassword(r)
  })

  it("in an event's data: sent without the password when it fits a request, else refused", async () => {
    const event = JSON.stringify({ name: 'deploy', data: { log: text } })
    const r = runner({ command: 'events', events: event })
    await run(r, CONTEXT)
    const fits = Buffer.byteLength(event) < 1_000_000
    expect(emulator.requestsTo('POST /v2/stream')).toHaveLength(fits ? 1 : 0)
    expect(r.failures).toHaveLength(fits ? 0 : 1)
    expectNoPassword(r)
  })

  it("in a pushed commit's author name: cut, the change recorded without the password", async () => {
    const payload = {
      ref: 'refs/heads/main',
      before: sha(11),
      after: sha(12),
      repository: { full_name: REPOSITORY },
      commits: [{ id: sha(12), message: 'Ship it', author: { name: text } }]
    }
    const path = join(mkdtempSync(join(tmpdir(), 'cta-event-')), 'event.json')
    writeFileSync(path, JSON.stringify(payload))
    const r = runner({ 'include-commits': 'true', 'github-token': '' })
    await run(r, {
      ...CONTEXT,
      ...runnerContext(tmpdir()),
      GITHUB_EVENT_NAME: 'push',
      GITHUB_EVENT_PATH: path,
      GITHUB_SHA: sha(12)
    })
    expect(r.failures).toEqual([])
    const [request] = emulator.requestsTo('POST /v2/change')
    const sent = JSON.parse(request.body) as { custom_metadata: string }
    const metadata = JSON.parse(sent.custom_metadata) as {
      github: { commits: { author: string }[] }
    }
    expect(metadata.github.commits[0].author).toBe(`https://***@git.example/ ${'a.'.repeat(32)}`)
    expectNoPassword(r)
  })
})
