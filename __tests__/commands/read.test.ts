/** get-change and hello against the emulator, through no door, with their dry runs. */
import { describe, expect, it } from '@jest/globals'
import { tmpdir } from 'node:os'
import type { RunDefaults } from '../../src/change.ts'
import { recordChange } from '../../src/commands/change.ts'
import { getChange, hello } from '../../src/commands/read.ts'
import { Emulator } from '../../emulator/emulator.ts'
import { finish, runCommandWith } from '../support/command-context.ts'
import { useEmulator } from '../support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})

const RUN: RunDefaults = {
  service: 'octo-org/shop',
  version: 'a1b2c3d'.padEnd(40, '0'),
  metadata: { key: 'run', fields: {} },
  workspace: tmpdir()
}

/** The inputs of a run against `service`, with these. */
function inputs(given: Record<string, string>, service = emulator): Record<string, string> {
  return { 'api-key': service.apiKey, 'base-url': service.url, ...given }
}

describe('get-change', () => {
  it('outputs the change and shows it in the summary', async () => {
    const recorded = await runCommandWith(
      inputs({ description: 'Flag flip', labels: 'flags' }),
      RUN,
      recordChange
    )
    const id = String(recorded.result?.outputs['change-id'])
    const read = await runCommandWith(
      inputs({ command: 'get-change', 'change-id': id }),
      RUN,
      getChange
    )
    expect(read.error).toBeUndefined()
    expect(read.result?.title).toEqual({ done: { subject: 'Change', outcome: 'read' } })
    expect(JSON.parse(String(read.result?.outputs['change']))).toEqual(emulator.changes.get(id))
    expect(read.recorder.lines).toContain(`Read change ${id}.`)
    await finish(read)
    expect(read.recorder.failures).toEqual([])
    expect(read.recorder.summary).toContain('## Change read')
    expect(read.recorder.summary).toContain('Flag flip')
    expect(read.recorder.summary).toMatch(/Created at \| \d{4}-\d\d-\d\dT/)
  })

  it("fails clearly on an unknown id: the call, the status and the door's advice", async () => {
    const hints = { getChange: { 404: 'No change has that id: check <change-id>.' } }
    const read = await runCommandWith(
      inputs({ command: 'get-change', 'change-id': 'nope' }),
      RUN,
      getChange,
      { hints }
    )
    expect(read.result).toBeUndefined()
    const message = (read.error as Error).message
    expect(message).toContain('GET /v2/change/nope')
    expect(message).toContain('404')
    expect(message).toMatch(/No change has that id: check <change-id>\.$/)
    await finish(read)
    expect(read.recorder.failures).toEqual([message])
  })

  it('in a dry run prints the request, and shows only the id it would read', async () => {
    const read = await runCommandWith(
      inputs({ command: 'get-change', 'change-id': 'c 1', 'dry-run': 'true' }),
      RUN,
      getChange
    )
    await finish(read)
    expect(emulator.requests).toEqual([])
    expect(read.recorder.lines).toContain(`[dry-run] GET ${emulator.url}v2/change/c%201`)
    expect(read.recorder.outputs).toEqual({})
    expect(read.recorder.summary).toContain('## Change not read')
    expect(read.recorder.summary).toContain('| Id | c 1 |')
    expect(read.recorder.summary).not.toContain('Service')
  })
})

describe('hello', () => {
  it('accepts a good key', async () => {
    const checked = await runCommandWith(inputs({ command: 'hello' }), RUN, hello)
    expect(checked.error).toBeUndefined()
    expect(checked.result?.title).toEqual({ done: { subject: 'API key', outcome: 'valid' } })
    await finish(checked)
    expect(checked.recorder.summary).toContain('## API key valid')
    expect(checked.recorder.summary).toContain(
      '| Result | The API key is valid \\(GET /v2/hello answered OK\\). |'
    )
  })

  it('says the key was rejected', async () => {
    const checked = await runCommandWith(
      inputs({ command: 'hello', 'api-key': 'bad-key-000' }),
      RUN,
      hello
    )
    expect((checked.error as Error).message).toContain('rejected the API key')
  })

  it('accepts "OK" as a JSON string too', async () => {
    const jsonHello = await Emulator.start({ helloAsJson: true })
    try {
      const checked = await runCommandWith(inputs({ command: 'hello' }, jsonHello), RUN, hello)
      expect(checked.error).toBeUndefined()
      expect(jsonHello.requestsTo('GET /v2/hello')).toHaveLength(1)
    } finally {
      await jsonHello.close()
    }
  })

  it('rejects a 2XX that is not OK', async () => {
    emulator.inject('GET /v2/hello', { status: 200, body: '<html>login</html>' })
    const checked = await runCommandWith(inputs({ command: 'hello' }), RUN, hello)
    expect((checked.error as Error).message).toContain('"OK"')
  })

  it('in a dry run says the key was not checked', async () => {
    const checked = await runCommandWith(
      inputs({ command: 'hello', 'dry-run': 'true' }),
      RUN,
      hello
    )
    await finish(checked)
    expect(emulator.requests).toEqual([])
    expect(checked.recorder.summary).toContain('## API key not checked')
    expect(checked.recorder.summary).not.toContain('The API key is valid')
    expect(checked.recorder.lines).not.toContain(expect.stringContaining('accepted the API key'))
  })
})
