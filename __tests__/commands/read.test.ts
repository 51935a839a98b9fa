/** get-change and hello in process, against the emulator, with their dry runs. */
import { describe, expect, it } from '@jest/globals'
import { run } from '../../src/main.ts'
import { Emulator } from '../../emulator/emulator.ts'
import { useEmulator } from '../support/use-emulator.ts'
import { FakeRunner } from '../support/fake-runner.ts'

let emulator: Emulator
useEmulator(started => (emulator = started))

async function action(inputs: Record<string, string>, service = emulator): Promise<FakeRunner> {
  const runner = new FakeRunner({ 'api-key': service.apiKey, 'base-url': service.url, ...inputs })
  await run(runner, { GITHUB_SHA: 'a1b2c3d'.padEnd(40, '0'), GITHUB_REPOSITORY: 'octo-org/shop' })
  return runner
}

describe('get-change', () => {
  it('outputs the change and shows it in the summary', async () => {
    const recorded = await action({ description: 'Flag flip', labels: 'flags' })
    const id = recorded.outputs['change-id']
    const r = await action({ command: 'get-change', 'change-id': id })
    expect(r.failures).toEqual([])
    expect(JSON.parse(r.outputs['change'])).toEqual(emulator.changes.get(id))
    expect(r.lines).toContain(`Read change ${id}.`)
    expect(r.summary).toContain('## Change read')
    expect(r.summary).toContain('Flag flip')
    expect(r.summary).toMatch(/Created at \| \d{4}-\d\d-\d\dT/)
  })

  it('fails clearly on an unknown id', async () => {
    const r = await action({ command: 'get-change', 'change-id': 'nope' })
    expect(r.failures[0]).toContain('GET /v2/change/nope')
    expect(r.failures[0]).toContain('404')
    expect(r.failures[0]).toContain('change-id')
  })

  it('in a dry run prints the request, and shows only the id it would read', async () => {
    const r = await action({ command: 'get-change', 'change-id': 'c 1', 'dry-run': 'true' })
    expect(emulator.requests).toEqual([])
    expect(r.lines).toContain(`[dry-run] GET ${emulator.url}v2/change/c%201`)
    expect(r.outputs).toEqual({})
    expect(r.summary).toContain('## Change not read')
    expect(r.summary).toContain('| Id | c 1 |')
    expect(r.summary).not.toContain('Service')
  })
})

describe('hello', () => {
  it('accepts a good key', async () => {
    const r = await action({ command: 'hello' })
    expect(r.failures).toEqual([])
    expect(r.summary).toContain('## API key valid')
    expect(r.summary).toContain(
      '| Result | The API key is valid \\(GET /v2/hello answered OK\\). |'
    )
  })

  it('says the key was rejected', async () => {
    const r = await action({ command: 'hello', 'api-key': 'bad-key-000' })
    expect(r.failures[0]).toContain('rejected the API key')
  })

  it('accepts "OK" as a JSON string too', async () => {
    const jsonHello = await Emulator.start({ helloAsJson: true })
    try {
      expect((await action({ command: 'hello' }, jsonHello)).failures).toEqual([])
    } finally {
      await jsonHello.close()
    }
  })

  it('rejects a 2XX that is not OK', async () => {
    emulator.inject('GET /v2/hello', { status: 200, body: '<html>login</html>' })
    const r = await action({ command: 'hello' })
    expect(r.failures[0]).toContain('"OK"')
  })

  it('in a dry run says the key was not checked', async () => {
    const r = await action({ command: 'hello', 'dry-run': 'true' })
    expect(emulator.requests).toEqual([])
    expect(r.summary).toContain('## API key not checked')
    expect(r.summary).not.toContain('The API key is valid')
    expect(r.lines).not.toContain(expect.stringContaining('accepted the API key'))
  })
})
