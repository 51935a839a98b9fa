/** Pass 1: every event read and checked, exactly as strict as the interface, before anything is sent. */
import { afterAll, describe, expect, it } from '@jest/globals'
import { Buffer } from 'node:buffer'
import { tmpdir } from 'node:os'
import { validateEvents } from '../../src/events/validate.ts'
import { MAX_JSON_DEPTH } from '../../src/helpers/json.ts'
import { MAX_REQUEST_BYTES } from '../../src/service/client.ts'
import {
  bodyText,
  collectBatches,
  countEvents,
  eventOfBytes,
  eventPath,
  expectRefused,
  file,
  inline,
  ndjson,
  numberedEvents,
  removeEventFiles
} from '../support/events.ts'

/** JSON nested `depth` levels deep, counting the event object itself. */
function nestedEvent(depth: number): string {
  const inner = depth - 1
  return `{"name":"deep","data":${'['.repeat(inner)}${']'.repeat(inner)}}`
}

afterAll(removeEventFiles)

describe('reading the events and events-file inputs', () => {
  it('reads NDJSON with a BOM, CRLF line ends, blank lines and a trailing newline', async () => {
    const source = inline(
      '\uFEFF{"id":"a","name":"n","data":1}\r\n\r\n  \r\n{"id":"b","name":"n","data":2}\r\n'
    )
    expect(await countEvents(source)).toBe(2)
    const [batch] = await collectBatches(source)
    expect(bodyText(batch)).toBe('{"id":"a","name":"n","data":1}\n{"id":"b","name":"n","data":2}\n')
  })

  it('reads the same NDJSON from a file', async () => {
    const source = file(
      'crlf.ndjson',
      '\uFEFF{"id":"a","name":"n","data":1}\r\n\r\n{"id":"b","name":"n","data":2}\r\n'
    )
    expect(await countEvents(source)).toBe(2)
    expect((await collectBatches(source))[0].ids).toEqual(['a', 'b'])
  })

  it('reads a single inline event object, on one line or pretty-printed', async () => {
    for (const text of [
      '{"id":"a","name":"n","data":{"k":1}}',
      '{\n  "id": "a",\n  "name": "n",\n  "data": {"k": 1}\n}'
    ]) {
      expect(await countEvents(inline(text))).toBe(1)
      const [batch] = await collectBatches(inline(text))
      expect(JSON.parse(bodyText(batch))).toEqual({ id: 'a', name: 'n', data: { k: 1 } })
    }
  })

  it('reads a JSON array on a single line as one document', async () => {
    const source = inline(`${JSON.stringify(numberedEvents(3))}\n`)
    expect(await countEvents(source)).toBe(3)
    expect((await collectBatches(source))[0].ids).toEqual(['e1', 'e2', 'e3'])
  })

  it('reads a pretty-printed JSON array file and a pretty-printed event object file', async () => {
    const array = file('array.json', `\uFEFF${JSON.stringify(numberedEvents(3), null, 2)}\n`)
    expect(await countEvents(array)).toBe(3)
    expect((await collectBatches(array))[0].ids).toEqual(['e1', 'e2', 'e3'])

    const object = file(
      'object.json',
      JSON.stringify({ id: 'x', name: 'n', data: [1, 2] }, null, 2)
    )
    expect(await countEvents(object)).toBe(1)
    expect(bodyText((await collectBatches(object))[0])).toBe('{"id":"x","name":"n","data":[1,2]}\n')
  })

  it('sends NDJSON lines as written, so numbers JavaScript would round keep every digit', async () => {
    const line = '{"name": "n",  "data": {"big": 12345678901234567890, "f": 1.0}}'
    const [batch] = await collectBatches(inline(`${line}\n`))
    expect(bodyText(batch)).toBe(`{"id":"${batch.ids[0]}",${line.slice(1)}\n`)
  })

  it('keeps numbers as written in a JSON document too', async () => {
    const [batch] = await collectBatches(
      inline(
        '[\n  {"id": "a", "name": "n", "data": {"big": 12345678901234567890, "f": 1.0, "small": 2}}\n]'
      )
    )
    expect(bodyText(batch)).toBe(
      '{"id":"a","name":"n","data":{"big":12345678901234567890,"f":1.0,"small":2}}\n'
    )
  })

  it('refuses fields other than id, name and data, which the service does not accept', async () => {
    const event = { name: 'n', data: { a: [1, { b: null }] }, extra: 'kept', timestamp: 12 }
    await expect(collectBatches(inline(JSON.stringify([event])))).rejects.toThrow(
      /event 1: it has "extra", "timestamp": an event has only "id", "name" and "data"/
    )
  })

  it('reads lines longer than a read chunk, and a last line without a newline', async () => {
    const events = ['a', 'b', 'c', 'd', 'e'].map(id => eventOfBytes(200_000, id))
    const source = file(
      'long-lines.ndjson',
      events.map(event => JSON.stringify(event)).join('\r\n')
    )
    const batches = await collectBatches(source)
    expect(batches.map(batch => batch.ids)).toEqual([['a', 'b', 'c', 'd', 'e']])
    expect(bodyText(batches[0])).toBe(events.map(event => `${JSON.stringify(event)}\n`).join(''))
  })

  it('reads a first line that is an array as the start of one JSON document', async () => {
    const error = await expectRefused(inline('[{"name":"a","data":1}]\n{"name":"b","data":2}'))
    expect(error.detail).toMatch(/^ is not valid JSON: .*line 2/)
  })
})

describe('validation: nothing is sent when any event is invalid', () => {
  const valid = '{"name":"ok","data":1}'
  it.each([
    ['no name', '{"data":1}', 'line 3', 'it has no "name"'],
    ['an empty name', '{"name":"","data":1}', 'line 3', '"name" is empty'],
    ['a numeric name', '{"name":5,"data":1}', 'line 3', '"name" is a number'],
    ['no data', '{"name":"n"}', 'line 3', 'it has no "data"'],
    ['a numeric id', '{"id":7,"name":"n","data":1}', 'line 3', '"id" is a number'],
    ['an empty id', '{"id":"","name":"n","data":1}', 'line 3', '"id" is empty'],
    ['an array instead of an object', '[1,2]', 'line 3', 'it is an array, not an event object'],
    ['a string instead of an object', '"deploy"', 'line 3', 'it is a string, not an event object'],
    ['bad JSON', '{"name":"n",', 'line 3', 'it is not valid JSON']
  ])(
    'names an NDJSON event with %s by its line number, counting blank lines',
    async (_, bad, label, problem) => {
      const error = await expectRefused(inline(`${valid}\n\n${bad}\n${valid}`))
      expect(error.kind).toBe('invalid')
      expect(error.detail).toContain(`, ${label}: ${problem}`)
      expect(error.detail).toContain('Nothing was sent')
    }
  )

  it('names an event of a JSON array by its 1-based index', async () => {
    const error = await expectRefused(
      inline(JSON.stringify([{ name: 'a', data: 1 }, { name: 'b', data: 2 }, { name: 'c' }]))
    )
    expect(error.message).toContain('event 3: it has no "data"')
  })

  it('names an invalid line of a file', async () => {
    const source = file('bad.ndjson', `${valid}\n${valid}\n{"name":"","data":1}\n`)
    const error = await expectRefused(source)
    expect(error.detail).toContain(', line 3: "name" is empty')
  })

  it('lists the first few invalid events and counts the rest', async () => {
    const lines = Array.from({ length: 8 }, (_, index) => `{"name":"n${index}"}`)
    const error = await expectRefused(inline([valid, ...lines].join('\n')))
    expect(error.detail).toContain(' has 8 invalid events; nothing was sent.')
    expect(error.detail).toContain('line 2: it has no "data"')
    expect(error.detail).toContain('line 6: it has no "data"')
    expect(error.detail).not.toContain('line 7')
    expect(error.detail).toContain('and 3 more')
  })

  it('refuses a document that is neither NDJSON nor valid JSON, with where it breaks', async () => {
    const error = await expectRefused(inline('{\n  "name": "n"\n  "data": 1\n}'))
    expect(error.detail).toMatch(/^ is not valid JSON: .*line 3/)
    expect(error.detail).toContain('NDJSON (one event object per line)')
  })

  it('refuses input with no events: empty, blank lines, an empty array', async () => {
    for (const text of ['', '\n\n  \r\n', '[]', '[\n]']) {
      const error = await expectRefused(inline(text))
      expect(error.detail).toContain(' has no events')
    }
    expect((await expectRefused(file('empty.ndjson', '\uFEFF\n'))).detail).toContain(
      ' has no events'
    )
  })

  it('refuses a missing file and a directory', async () => {
    const missing = await expectRefused({ kind: 'file', path: eventPath('nope.ndjson') })
    expect(missing.kind).toBe('unreadable')
    expect(missing.detail).toBe(' cannot be read: there is no such file.')
    const directory = await expectRefused({ kind: 'file', path: tmpdir() })
    expect(directory.detail).toBe(' is not a file.')
  })

  it('refuses an event larger than a request, before sending anything', async () => {
    const tooBig = eventOfBytes(MAX_REQUEST_BYTES + 1, 'big')
    const error = await expectRefused(inline(ndjson([{ name: 'a', data: 1 }, tooBig])))
    expect(error.detail).toContain(`line 2: it is ${MAX_REQUEST_BYTES + 1} bytes`)
  })

  it('counts the generated id in the size of an event that has none', async () => {
    const fits = eventOfBytes(MAX_REQUEST_BYTES, 'x'.repeat(36))
    const withoutId = { name: fits.name, data: fits.data }
    // With a 36-character generated id the event is exactly at the limit…
    const [batch] = await collectBatches(inline(JSON.stringify(withoutId)))
    expect(batch.body.length).toBe(MAX_REQUEST_BYTES)
    // …and one byte more does not fit.
    const error = await expectRefused(
      inline(JSON.stringify({ ...withoutId, data: `${fits.data}x` }))
    )
    expect(error.detail).toContain('with its generated id')
  })

  it('accepts an event of exactly the request size limit, alone in its batch', async () => {
    const batches = await collectBatches(
      inline(ndjson([eventOfBytes(MAX_REQUEST_BYTES, 'a'), { id: 'b', name: 'n', data: 1 }]))
    )
    expect(batches.map(batch => batch.ids)).toEqual([['a'], ['b']])
    expect(batches[0].body.length).toBe(MAX_REQUEST_BYTES)
  })
})

describe('UTF-8', () => {
  const bad = Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])
  const valid = Buffer.from('{"name":"ok","data":1}\n')

  it('refuses invalid UTF-8 on an NDJSON line, naming the line', async () => {
    const error = await expectRefused(file('bad-utf8.ndjson', Buffer.concat([valid, valid, bad])))
    expect(error.detail).toBe(', line 3: it is not valid UTF-8. Nothing was sent.')
  })

  it('refuses invalid UTF-8 on the first line, and in a pretty-printed document', async () => {
    const first = await expectRefused(
      file('bad-first.ndjson', Buffer.concat([bad, Buffer.from('\n')]))
    )
    expect(first.detail).toBe(
      ', line 1: it is not valid UTF-8. Save the file as UTF-8. Nothing was sent.'
    )
    const document = Buffer.concat([
      Buffer.from('{\n  "name": "n",\n  "data": "'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"\n}\n')
    ])
    const error = await expectRefused(file('bad.json', document))
    expect(error.detail).toContain(', line 3: it is not valid UTF-8')
  })

  it('refuses inline text with a lone surrogate, naming its line', async () => {
    const error = await expectRefused({
      kind: 'inline',
      text: '{"name":"a","data":1}\n{"name":"b\uD800","data":1}'
    })
    expect(error.detail).toContain(', line 2: it is not valid UTF-8')
  })

  it('sends multi-byte characters as written', async () => {
    const line = '{"id":"u","name":"é€😀","data":"ünïcödé"}'
    const [batch] = await collectBatches(file('unicode.ndjson', `${line}\n`))
    expect(batch.body.toString('utf8')).toBe(`${line}\n`)
  })
})

describe('ids unique within a run', () => {
  it('refuses a duplicated id in NDJSON, naming both lines', async () => {
    const error = await expectRefused({
      kind: 'inline',
      text: '{"id":"a","name":"n","data":1}\n{"name":"n","data":2}\n\n{"id":"a","name":"n","data":3}'
    })
    expect(error.detail).toBe(
      ', line 4: its "id" "a" is also the id of line 1; ids must be unique. Nothing was sent.'
    )
  })

  it('refuses a duplicated id in a JSON array, naming both events', async () => {
    const error = await expectRefused({
      kind: 'inline',
      text: JSON.stringify([
        { id: 'x', name: 'n', data: 1 },
        { id: 'y', name: 'n', data: 1 },
        { id: 'x', name: 'n', data: 1 }
      ])
    })
    expect(error.detail).toBe(
      ', event 3: its "id" "x" is also the id of event 1; ids must be unique. Nothing was sent.'
    )
  })
})

describe('data', () => {
  it('sends "data": null, a JSON value', async () => {
    const [batch] = await collectBatches({
      kind: 'inline',
      text: '{"id":"n","name":"n","data":null}'
    })
    expect(batch.body.toString('utf8')).toBe('{"id":"n","name":"n","data":null}\n')
  })
})

describe(`JSON nested deeper than ${MAX_JSON_DEPTH}`, () => {
  it('accepts an NDJSON event at the bound and refuses one past it, naming the line', async () => {
    expect(
      (await validateEvents({ kind: 'inline', text: nestedEvent(MAX_JSON_DEPTH) })).total
    ).toBe(1)
    const error = await expectRefused({
      kind: 'inline',
      text: `{"name":"ok","data":1}\n${nestedEvent(MAX_JSON_DEPTH + 1)}`
    })
    expect(error.detail).toBe(
      `, line 2: it nests JSON deeper than ${MAX_JSON_DEPTH} levels. Nothing was sent.`
    )
  })

  it('refuses a 20,000-deep event in a document, naming its line, without overflowing the stack', async () => {
    const error = await expectRefused(
      file('deep.json', `[\n  {"name":"ok","data":1},\n  ${nestedEvent(20_000)}\n]\n`)
    )
    expect(error.detail).toContain(`, line 3: it nests JSON deeper than ${MAX_JSON_DEPTH} levels`)
    expect(error.message).not.toContain('call stack')
  })
})

describe('parse errors', () => {
  it('give the line number once, without the parser\'s "(line 1 column …)"', async () => {
    const error = await expectRefused({
      kind: 'inline',
      text: '{"name":"ok","data":1}\n{"name":"n",'
    })
    expect(error.detail).toMatch(/^, line 2: it is not valid JSON \(.+ at position \d+\)\. /)
    expect(error.detail).not.toMatch(/column/)
  })
})
