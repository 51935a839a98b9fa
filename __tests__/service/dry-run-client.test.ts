/** The dry run: every request printed as a real run would send it, none sent. */
import { describe, expect, it } from '@jest/globals'
import { DRY_RUN_ID } from '../../src/service/client.ts'
import { DryRunClient } from '../../src/service/dry-run-client.ts'
import type { ServiceRequest } from '../../src/service/request.ts'

function dryRun(): { client: DryRunClient; printed: string[] } {
  const printed: string[] = []
  const print = (request: ServiceRequest, url: URL): void => {
    printed.push(`${request.method} ${url.href} ${request.body ?? ''}`.trim())
  }
  return {
    client: new DryRunClient(new URL('https://service.example/api/'), print),
    printed
  }
}

describe('DryRunClient', () => {
  it('prints each request below the service root, and answers placeholders of the real types', async () => {
    const { client, printed } = dryRun()
    // A change's id is a new UUID each time: its CDEvent needs an id of its own.
    const id = await client.createChange({ description: 'Deploy' })
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(await client.createChange({ description: 'Deploy' })).not.toBe(id)
    expect(await client.getChange('a/b')).toEqual({ id: 'a/b' })
    expect(await client.sendEvents('{}\n{}\n', 2)).toEqual([DRY_RUN_ID, DRY_RUN_ID])
    expect(await client.getEventResults(['a', 'b,c', 'd e'])).toEqual([])
    expect(await client.sendHeartbeat('m 1')).toBe(DRY_RUN_ID)
    expect(await client.hello()).toBe('OK')
    expect(printed).toEqual([
      'POST https://service.example/api/v2/change {"description":"Deploy"}',
      'POST https://service.example/api/v2/change {"description":"Deploy"}',
      'GET https://service.example/api/v2/change/a%2Fb',
      'POST https://service.example/api/v2/stream {}\n{}',
      'GET https://service.example/api/v2/event_results?ids=a,b%2Cc,d%20e',
      'POST https://service.example/api/v1/heartbeat/m%201',
      'GET https://service.example/api/v2/hello'
    ])
  })
})
