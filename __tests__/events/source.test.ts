/** Reading events' text with bounded memory, whatever a file holds. */
import { afterAll, describe, expect, it } from '@jest/globals'
import { Buffer } from 'node:buffer'
import { execFileSync, spawn } from 'node:child_process'
import { appendFileSync, truncateSync, writeFileSync } from 'node:fs'
import {
  MAX_DOCUMENT_BYTES,
  MAX_LINE_BYTES,
  LineTooLong,
  readLines
} from '../../src/events/source.ts'
import {
  collectBatches,
  eventPath,
  expectRefused,
  file,
  removeEventFiles
} from '../support/events.ts'

const THREE_GB = 3 * 1024 ** 3

afterAll(removeEventFiles)

describe('bounded reading of any file', () => {
  it('refuses a 3 GB file without a newline at its first line, having read little of it', async () => {
    const path = eventPath('sparse-3g')
    writeFileSync(path, '')
    truncateSync(path, THREE_GB)
    const error = await expectRefused({ kind: 'file', path })
    expect(error.detail).toBe(
      `, line 1: it is longer than ${MAX_LINE_BYTES} bytes, more than one request may hold (reading stopped there). Nothing was sent.`
    )
  })

  it('refuses a valid event followed by a 3 GB line, naming line 2', async () => {
    const source = file('event-then-3g', '{"name":"ok","data":1}\n')
    appendFileSync(source.path, '{"name":"huge","data":"')
    truncateSync(source.path, THREE_GB)
    const error = await expectRefused(source)
    expect(error.detail).toMatch(/^, line 2: it is longer than/)
  })

  it('stops at a line past the limit without waiting for the rest of it (a pipe that never ends)', async () => {
    const fifo = eventPath('endless')
    execFileSync('mkfifo', [fifo])
    // The writer keeps the pipe open after 3 MB without a newline: reading to the line's end
    // (or to the end of the input) would wait forever.
    const writer = spawn(
      'sh',
      ['-c', `exec 3>"${fifo}"; head -c 3000000 /dev/zero >&3; exec sleep 30`],
      { stdio: 'ignore' }
    )
    try {
      const lines = readLines({ kind: 'file', path: fifo })
      const thrown = await (async () => {
        for await (const group of lines) for (const line of group) void line
      })().then(
        () => undefined,
        (error: unknown) => error
      )
      expect(thrown).toBeInstanceOf(LineTooLong)
      expect((thrown as LineTooLong).lineNumber).toBe(1)
    } finally {
      writer.kill()
    }
  })

  it('reads a one-line JSON array longer than a line, as a document', async () => {
    const events = Array.from({ length: 3000 }, (_, index) => ({
      id: `d${index}`,
      name: 'n',
      data: 'x'.repeat(500)
    }))
    const text = JSON.stringify(events)
    expect(Buffer.byteLength(text)).toBeGreaterThan(MAX_LINE_BYTES)
    const batches = await collectBatches(file('one-line-array.json', text))
    expect(batches.flatMap(batch => batch.ids)).toEqual(events.map(event => event.id))
  })

  it('refuses a JSON document larger than it reads whole', async () => {
    const source = file('huge-array.json', '[\n')
    truncateSync(source.path, MAX_DOCUMENT_BYTES + 1)
    const error = await expectRefused(source)
    expect(error.detail).toContain(`is a JSON document of more than ${MAX_DOCUMENT_BYTES} bytes`)
    expect(error.detail).toContain('as NDJSON')
  })
})
