/**
 * The core's steps in process, against the emulator: a SIGINT while a change is recorded stops
 * the lookup and lets the change in flight finish within the grace given, then exits 130; and
 * what shipped is looked up once, however many services are recorded.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals'
import type { Emulator } from '../emulator/emulator.ts'
import { ACTION_WORDS } from '../src/main.ts'
import { emptyShipped } from '../src/shipped/types.ts'
import { openRun, runCommand } from '../src/step.ts'
import { FakeRunner } from './support/fake-runner.ts'
import { useEmulator } from './support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => (emulator = started))
afterEach(() => {
  jest.restoreAllMocks()
})

describe('runCommand, cancelled', () => {
  it('on SIGINT stops the lookup, lets the change in flight go on for the grace given, then exits 130 naming it', async () => {
    const exited = new Promise<unknown>(resolve =>
      jest.spyOn(process, 'exit').mockImplementation(code => resolve(code) as never)
    )
    emulator.inject('POST /v2/change', { hang: true })
    const runner = new FakeRunner({ 'api-key': emulator.apiKey, 'base-url': emulator.url })
    const open = await openRun({
      sink: runner,
      getInput: name => runner.getInput(name),
      words: ACTION_WORDS
    })
    let lookupStopped = false
    const done = runCommand(open, {
      run: {
        service: 'shop',
        version: 'v1',
        metadata: { key: 'ci', fields: {} },
        workspace: '.'
      },
      lookUp: async (_, signal) => {
        // As a real signal is delivered: with its name.
        ;(process.emit as (event: string, ...args: unknown[]) => boolean)('SIGINT', 'SIGINT')
        lookupStopped = signal?.aborted === true
        return {}
      },
      budgetCap: Infinity,
      onSignal: 'exit',
      graceMs: 50
    })
    expect(await exited).toBe(130)
    expect(lookupStopped).toBe(true)
    // The change was sent: it reaches the emulator, however loaded the machine.
    for (
      let waited = 0;
      emulator.requestsTo('POST /v2/change').length === 0 && waited < 5000;
      waited += 10
    )
      await new Promise(resolve => setTimeout(resolve, 10))
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(1)
    expect(runner.outputs['error']).toMatch(
      /cancelled \(SIGINT\).*A change \(POST \/v2\/change\) was in flight/
    )
    emulator.reset()
    void done
  })
})

describe('runCommand, with many services', () => {
  it('looks up what shipped once, and records 50 services from it', async () => {
    const services = Array.from({ length: 50 }, (_, i) => `svc-${i}: services/api/** apps/s${i}/**`)
    const runner = new FakeRunner({
      'api-key': emulator.apiKey,
      'base-url': emulator.url,
      'max-attempts': '1',
      services: services.join('\n')
    })
    const open = await openRun({
      sink: runner,
      getInput: name => runner.getInput(name),
      words: ACTION_WORDS
    })
    let lookups = 0
    const error = await runCommand(open, {
      run: { version: 'v1', metadata: { key: 'ci', fields: {} }, workspace: '.' },
      lookUp: async () => {
        lookups++
        return {
          shipped: {
            ...emptyShipped(),
            previousSha: 'a'.repeat(40),
            commitCount: 1,
            changedFiles: [{ path: 'services/api/login.ts' }],
            changedFilesComplete: true
          }
        }
      },
      budgetCap: Infinity,
      onSignal: 'stop'
    })
    expect(error).toBeUndefined()
    expect(lookups).toBe(1)
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(50)
    await open.report.finish({ policy: 'auto', jobSummary: true })
    expect(Object.keys(JSON.parse(runner.outputs['change-ids']))).toHaveLength(50)
  })
})
