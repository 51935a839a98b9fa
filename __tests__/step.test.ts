/**
 * The core's steps in process, against the emulator and the fake GitHub API, through a
 * door-neutral renderer: the key check before a deploy, a command stopped by a door's cancel or
 * halt (AbortSignals; no process signal is sent, and each test acts when the emulator sees the
 * call it means), what one step may spend on the service, and one lookup for many services.
 */
import { describe, expect, it } from '@jest/globals'
import type { Emulator } from '../emulator/emulator.ts'
import type { RunDefaults } from '../src/change.ts'
import { InputError, ServiceError } from '../src/errors.ts'
import { CancelledError } from '../src/policy.ts'
import type { LookupSource } from '../src/shipped/lookup-source.ts'
import {
  AFTER_DEPLOY_BUDGET_MS,
  checkKey,
  finishRun,
  KEY_CHECK_BUDGET_MS,
  openRun,
  runCommand,
  serviceBudget
} from '../src/step.ts'
import { lookupOptions, REPOSITORY, sha, useFakeGitHub } from './shipped/fake-github.ts'
import { arrivalOf } from './support/arrival.ts'
import { Recorder, TEST_WORDS } from './support/recorder.ts'
import { useEmulator } from './support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})
const github = useFakeGitHub()

const RUN: RunDefaults = {
  service: 'shop',
  version: sha(12),
  metadata: { key: 'ci', fields: {} },
  workspace: '.'
}
const COMPARE = `GET /repos/${REPOSITORY}/compare/*`
const CHANGE = { label: 'A change (POST /v2/change)', records: true }

/**
 * A run opened against the emulator. A call waits up to 300 s: a test whose call is stopped
 * ends only because it was stopped.
 */
async function opened(inputs: Record<string, string> = {}) {
  const recorder = new Recorder()
  const open = await openRun({
    renderer: recorder,
    inputs: {
      'api-key': emulator.apiKey,
      'base-url': emulator.url,
      'max-attempts': '1',
      'timeout-seconds': '300',
      ...inputs
    },
    words: TEST_WORDS
  })
  return { recorder, open }
}

/** What shipped, from the fake GitHub API: the commits since sha(10), waited for as long as it takes. */
function lookup(): LookupSource {
  const options = { ...lookupOptions(github()), previousVersion: sha(10), budgetMs: 300_000 }
  return { from: 'github', options }
}

/** A door's cancel and halt, aborted by the test instead of a signal. */
function stopping() {
  const cancel = new AbortController()
  const halt = new AbortController()
  return { cancel, halt, plan: { cancel: cancel.signal, halt: halt.signal } }
}

describe('checkKey, before a deploy', () => {
  it('checks the key with GET /v2/hello alone, and records nothing', async () => {
    const { open } = await opened()
    const outcome = await checkKey(open, { run: RUN, budgetCap: KEY_CHECK_BUDGET_MS })
    expect(outcome).toEqual({ result: undefined, error: undefined })
    expect(emulator.requests.map(r => `${r.method} ${r.rawPath}`)).toEqual(['GET /v2/hello'])
  })

  it.each(['version', 'service'] as const)(
    'refuses a change whose %s is unknown, naming it, before any request',
    async missing => {
      const { open } = await opened()
      const outcome = await checkKey(open, {
        run: { ...RUN, [missing]: undefined },
        budgetCap: KEY_CHECK_BUDGET_MS
      })
      expect(outcome.error).toBeInstanceOf(InputError)
      expect((outcome.error as InputError).input).toBe(missing)
      expect(emulator.requests).toEqual([])
    }
  )

  it('asks no version of a heartbeat', async () => {
    const { open } = await opened({ command: 'heartbeat', 'heartbeat-id': 'nightly' })
    const run = { ...RUN, version: undefined }
    expect((await checkKey(open, { run, budgetCap: KEY_CHECK_BUDGET_MS })).error).toBeUndefined()
  })

  it('answers with the service’s refusal of the key', async () => {
    const { open } = await opened({ 'api-key': 'not-the-key' })
    const { error } = await checkKey(open, { run: RUN, budgetCap: KEY_CHECK_BUDGET_MS })
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ kind: 'rejected', status: 401 })
  })
})

describe('a run opened with an error', () => {
  it('sends nothing, at the key check or after, and answers with the error', async () => {
    const { open } = await opened({ 'max-attempts': '11' })
    expect(open.error).toBeInstanceOf(InputError)
    const plan = { run: RUN, budgetCap: Infinity }
    expect(await checkKey(open, plan)).toEqual({ error: open.error })
    expect(await runCommand(open, plan)).toEqual({ error: open.error })
    expect(emulator.requests).toEqual([])
  })
})

describe('a step stopped by a cancel or a halt', () => {
  it('stops the key check at once, even on SIGINT, naming the check in flight', async () => {
    emulator.inject('GET /v2/hello', { hang: true })
    const { open } = await opened()
    const { cancel, plan } = stopping()
    void arrivalOf(emulator, 'GET /v2/hello').then(() => cancel.abort('SIGINT'))
    const { error } = await checkKey(open, { run: RUN, budgetCap: Infinity, ...plan })
    expect(error).toBeInstanceOf(CancelledError)
    expect(error).toMatchObject({
      signal: 'SIGINT',
      inFlight: [{ label: 'GET /v2/hello', records: false }]
    })
  })

  it('on SIGINT stops the lookup at once, and records the change with what is known', async () => {
    github().inject(COMPARE, { hang: true })
    const { recorder, open } = await opened()
    const { cancel, plan } = stopping()
    void arrivalOf(github(), COMPARE).then(() => cancel.abort('SIGINT'))
    const { result, error } = await runCommand(open, {
      run: RUN,
      lookup: lookup(),
      budgetCap: Infinity,
      ...plan
    })
    expect(recorder.warnings).toEqual([
      expect.stringContaining(`the run was cancelled before ${COMPARE.replace('*', '')}`)
    ])
    const id = result?.outputs['change-id'] as string
    expect(emulator.changes.has(id)).toBe(true)
    expect(error).toBeInstanceOf(CancelledError)
    expect(error).toMatchObject({ signal: 'SIGINT', inFlight: [] })
  })

  it('on SIGINT lets the change in flight finish, and names it as in flight', async () => {
    const { open } = await opened()
    const { cancel, plan } = stopping()
    void arrivalOf(emulator, 'POST /v2/change').then(() => cancel.abort('SIGINT'))
    const { result, error } = await runCommand(open, { run: RUN, budgetCap: Infinity, ...plan })
    expect(emulator.changes.has(result?.outputs['change-id'] as string)).toBe(true)
    expect(error).toMatchObject({ signal: 'SIGINT', inFlight: [CHANGE] })
  })

  it('on a halt after SIGINT stops the change in flight at once', async () => {
    emulator.inject('POST /v2/change', { hang: true })
    const { open } = await opened()
    const { cancel, halt, plan } = stopping()
    void arrivalOf(emulator, 'POST /v2/change').then(() => {
      cancel.abort('SIGINT')
      halt.abort('SIGTERM')
    })
    const { result, error } = await runCommand(open, { run: RUN, budgetCap: Infinity, ...plan })
    expect(error).toMatchObject({ signal: 'SIGINT', inFlight: [CHANGE] })
    expect(result?.title.notDone?.what).toBe('Change not recorded')
    expect(emulator.changes.size).toBe(0)
  })

  it.each(['SIGTERM', 'SIGHUP'] as const)(
    'on %s stops the change in flight at once, naming it',
    async signal => {
      emulator.inject('POST /v2/change', { hang: true })
      const { open } = await opened()
      const { cancel, plan } = stopping()
      void arrivalOf(emulator, 'POST /v2/change').then(() => cancel.abort(signal))
      const { error } = await runCommand(open, { run: RUN, budgetCap: Infinity, ...plan })
      expect(error).toMatchObject({ signal, inFlight: [CHANGE] })
    }
  )

  it('names the change a halt stopped, though it was sent after the SIGINT that stopped the lookup', async () => {
    github().inject(COMPARE, { hang: true })
    emulator.inject('POST /v2/change', { hang: true })
    const { open } = await opened()
    const { cancel, halt, plan } = stopping()
    void arrivalOf(github(), COMPARE).then(() => cancel.abort('SIGINT'))
    void arrivalOf(emulator, 'POST /v2/change').then(() => halt.abort('SIGTERM'))
    const { error } = await runCommand(open, {
      run: RUN,
      lookup: lookup(),
      budgetCap: Infinity,
      ...plan
    })
    // It may have been recorded before it was stopped: the cancel must say so.
    expect(error).toMatchObject({ signal: 'SIGINT', inFlight: [CHANGE] })
  })
})

describe('what one step may spend on the service', () => {
  it('is the outage budget, raised by a larger timeout-seconds, when recording at once', () => {
    expect(serviceBudget(30, Infinity)).toEqual({ timeoutMs: 30_000, outageBudgetMs: 60_000 })
    expect(serviceBudget(300, Infinity)).toEqual({ timeoutMs: 300_000, outageBudgetMs: 300_000 })
  })

  it('keeps a key check before a deploy within 10 s, whatever timeout-seconds says', () => {
    expect(serviceBudget(300, KEY_CHECK_BUDGET_MS)).toEqual({
      timeoutMs: 10_000,
      outageBudgetMs: 10_000
    })
  })

  it('keeps the calls after a deploy within 150 s, so that a post step ends within 3 minutes', () => {
    expect(serviceBudget(300, AFTER_DEPLOY_BUDGET_MS)).toEqual({
      timeoutMs: 150_000,
      outageBudgetMs: 150_000
    })
    expect(serviceBudget(10, AFTER_DEPLOY_BUDGET_MS)).toEqual({
      timeoutMs: 10_000,
      outageBudgetMs: 60_000
    })
  })
})

describe('runCommand, with many services', () => {
  it('looks up what shipped once, and records 50 services from it', async () => {
    const services = Array.from({ length: 50 }, (_, i) => `svc-${i}: src/** apps/s${i}/**`)
    const { recorder, open } = await opened({ services: services.join('\n') })
    const outcome = await runCommand(open, { run: RUN, lookup: lookup(), budgetCap: Infinity })
    expect(outcome.error).toBeUndefined()
    expect(github().requestsTo(COMPARE)).toHaveLength(1)
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(50)
    await finishRun(open, outcome, 'recording')
    expect(Object.keys(JSON.parse(recorder.outputs['change-ids']) as object)).toHaveLength(50)
  })
})
