/**
 * The service client's requests and its reading of answers, with nock standing in for the
 * service: one test per endpoint's shape, encoding and documented answer.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import nock from 'nock'
import { Redactor } from '../../src/redact.ts'
import { MAX_ID_CHARS, ServiceClient, type CallHints } from '../../src/service/client.ts'
import { Transport } from '../../src/service/transport.ts'

const BASE = 'https://service.example.com'
const KEY = 'client-test-key-0123'

function client(hints: CallHints = {}): ServiceClient {
  const transport = new Transport({
    baseUrl: new URL(`${BASE}/api/`),
    apiKey: KEY,
    timeoutMs: 2000,
    maxAttempts: 1,
    userAgent: 'test-agent/1',
    redactor: new Redactor(),
    advice: {
      changeWait: 'wait',
      checkAddress: 'check the address',
      checkApiKey: 'check the key'
    }
  })
  return new ServiceClient(transport, hints)
}

/** Ids that must never be taken: empty, a line break (a workflow command), ESC, bidi, too long. */
const UNFIT_IDS = [
  '',
  '  ',
  'sig1\n::warning::pwned',
  'sig1\r::set-output name=x::y',
  'a\u001b[31mred',
  'abc\u202edcba',
  'x'.repeat(MAX_ID_CHARS + 1)
]

beforeAll(() => {
  for (const name of ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'])
    delete process.env[name]
  nock.disableNetConnect()
})
afterEach(() => nock.cleanAll())
afterAll(() => {
  nock.enableNetConnect()
  nock.restore()
})

describe('createChange', () => {
  it('POSTs the change as JSON below the base path, with the key header', async () => {
    const scope = nock(BASE, {
      reqheaders: { 'x-service-apikey': KEY, 'user-agent': 'test-agent/1' }
    })
      .post('/api/v2/change', { description: 'Deploy', labels: 'a,b' })
      .matchHeader('content-type', 'application/json')
      .reply(201, { id: 'chg-1' })
    await expect(client().createChange({ description: 'Deploy', labels: 'a,b' })).resolves.toBe(
      'chg-1'
    )
    scope.done()
  })

  it.each([['{"id":42}'], ['[]'], ['null'], [''], ['<html>ok</html>']])(
    'refuses a 2XX body of the wrong shape: %s',
    async body => {
      nock(BASE).post('/api/v2/change').reply(200, body)
      await expect(client().createChange({ description: 'x' })).rejects.toMatchObject({
        kind: 'protocol',
        message: expect.stringContaining('POST /v2/change answered HTTP 200')
      })
    }
  )
})

describe('ids the service returns', () => {
  it.each(UNFIT_IDS.map(id => [JSON.stringify(id).slice(0, 40), id]))(
    'refuses the change id %s as a protocol error naming the call',
    async (_shown, id) => {
      nock(BASE).post('/api/v2/change').reply(201, { id })
      await expect(client().createChange({ description: 'x' })).rejects.toMatchObject({
        kind: 'protocol',
        call: 'POST /v2/change',
        message: expect.stringContaining('a single-line printable string of 1 to 1024 characters')
      })
    }
  )

  it('refuses a heartbeat signal id that would start a workflow command', async () => {
    nock(BASE).post('/api/v1/heartbeat/m1').reply(200, { id: 'sig1\n::add-mask::octocat' })
    await expect(client().sendHeartbeat('m1')).rejects.toMatchObject({
      kind: 'protocol',
      call: 'POST /v1/heartbeat/m1'
    })
  })

  it('refuses a batch whose event ids hold one unfit id', async () => {
    nock(BASE).post('/api/v2/stream').reply(202, ['e1', 'e2\u001b]0;x', 'e3'])
    await expect(client().sendEvents('{}\n{}\n{}\n', 3)).rejects.toThrow(
      /POST \/v2\/stream answered HTTP 202 Accepted, but not with the documented answer \(expected a JSON array of 3 event ids, each a single-line printable string/
    )
  })

  it('takes an id of exactly the longest length, with any printable Unicode', async () => {
    const id = `é✓${'x'.repeat(MAX_ID_CHARS - 2)}`
    nock(BASE).post('/api/v2/change').reply(201, { id })
    await expect(client().createChange({ description: 'x' })).resolves.toBe(id)
  })
})

describe('sendHeartbeat', () => {
  it('encodes the monitor id as one path segment and sends no body', async () => {
    const scope = nock(BASE)
      .post('/api/v1/heartbeat/a%2F..%2Fb%20c', body => body === '' || body === undefined)
      .reply(200, { id: 'sig-1' })
    await expect(client().sendHeartbeat('a/../b c')).resolves.toBe('sig-1')
    scope.done()
  })
})

describe('sendEvents', () => {
  it('POSTs NDJSON and returns the ids in order', async () => {
    const body = '{"id":"e1","name":"a","data":1}\n{"id":"e2","name":"b","data":2}\n'
    const scope = nock(BASE)
      .post('/api/v2/stream', body)
      .matchHeader('content-type', 'application/x-ndjson')
      .reply(202, ['e1', 'e2'])
    await expect(client().sendEvents(body, 2)).resolves.toEqual(['e1', 'e2'])
    scope.done()
  })

  it('refuses an answer with the wrong number of ids', async () => {
    nock(BASE).post('/api/v2/stream').reply(202, ['e1', 'e2'])
    await expect(client().sendEvents('{}\n', 1)).rejects.toThrow(/a JSON array of 1 event id, each/)
  })
})

describe('getEventResults', () => {
  it('returns whatever JSON the service sends, and text as text', async () => {
    nock(BASE)
      .get('/api/v2/event_results')
      .query(true)
      .reply(200, [{ id: 'a' }])
    await expect(client().getEventResults(['a'])).resolves.toEqual([{ id: 'a' }])
    nock(BASE).get('/api/v2/event_results').query(true).reply(200, 'pending')
    await expect(client().getEventResults(['a'])).resolves.toBe('pending')
    nock(BASE).get('/api/v2/event_results').query(true).reply(204)
    await expect(client().getEventResults(['a'])).resolves.toBeNull()
  })
})

describe('getChange', () => {
  it('GETs the encoded id and returns the change object', async () => {
    nock(BASE).get('/api/v2/change/id%20with%20space').reply(200, { id: 'id with space' })
    await expect(client().getChange('id with space')).resolves.toEqual({ id: 'id with space' })
  })

  it('refuses an answer nested deeper than the JSON bound as a protocol error naming the call', async () => {
    const deep = `{"id":"c1","custom_metadata":${'['.repeat(20_000)}${']'.repeat(20_000)}}`
    nock(BASE).get('/api/v2/change/c1').reply(200, deep)
    await expect(client().getChange('c1')).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringMatching(
        /^GET \/v2\/change\/c1 answered HTTP 200 OK, but not with the documented answer/
      )
    })
  })

  it("adds the caller's hint for the endpoint and status at the end of the failure", async () => {
    nock(BASE).get('/api/v2/change/nope').reply(404, { error: 'change not found' })
    const hinted = client({
      getChange: { 404: 'No change has that id: check the change-id input.' }
    })
    await expect(hinted.getChange('nope')).rejects.toMatchObject({
      kind: 'rejected',
      status: 404,
      call: 'GET /v2/change/nope',
      message:
        'GET /v2/change/nope was rejected with HTTP 404 Not Found: change not found. ' +
        "Check the address (it must be the service's root) and any id in the request. " +
        'No change has that id: check the change-id input.'
    })
    nock(BASE).get('/api/v2/change/nope').reply(404, { error: 'change not found' })
    await expect(client().getChange('nope')).rejects.toThrow(/in the request\.$/)
  })
})

describe('hello', () => {
  it.each([
    ['text', 'OK'],
    ['a JSON string', '"OK"']
  ])('accepts OK as %s', async (_form, body) => {
    nock(BASE).get('/api/v2/hello').reply(200, body)
    await expect(client().hello()).resolves.toBe('OK')
  })
})

describe('callsInFlight', () => {
  it('names every call under way, each once, and what a recording call may have recorded', async () => {
    nock(BASE).get('/api/v2/hello').delay(50).reply(200, 'OK')
    nock(BASE).post('/api/v2/change').twice().delay(50).reply(201, { id: 'c' })
    const service = client()
    const calls = Promise.all([
      service.hello(),
      service.createChange({ description: 'a' }),
      service.createChange({ description: 'b' })
    ])
    expect(service.callsInFlight()).toEqual([
      { label: 'GET /v2/hello', records: false },
      { label: 'A change (POST /v2/change)', records: true }
    ])
    await calls
    expect(service.callsInFlight()).toEqual([])
  })
})
