/** Names looked up on the event loop: the hosts file first, then DNS, stoppable. */
import { describe, expect, it } from '@jest/globals'
import { mkdtempSync, writeFileSync } from 'node:fs'
import type { LookupOptions } from 'node:dns'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stoppableLookup } from '../../src/service/resolver.ts'

const hosts = join(mkdtempSync(join(tmpdir(), 'cta-hosts-')), 'hosts')
writeFileSync(
  hosts,
  '# a comment\n10.1.2.3  Service.Example  alias # trailing\n::2 service.example\n'
)

function look(name: string, options: LookupOptions): Promise<unknown> {
  const { lookup, stop } = stoppableLookup(hosts)
  return new Promise((resolve, reject) =>
    lookup!(name, options, (error, address, family) => {
      stop()
      return error ? reject(error) : resolve(options.all ? address : { address, family })
    })
  )
}

describe('stoppableLookup', () => {
  it('answers from the hosts file, any case, in its order, for the family asked', async () => {
    expect(await look('service.example', { all: true })).toEqual([
      { address: '10.1.2.3', family: 4 },
      { address: '::2', family: 6 }
    ])
    expect(await look('SERVICE.example', { family: 6 })).toEqual({ address: '::2', family: 6 })
    expect(await look('alias', {})).toEqual({ address: '10.1.2.3', family: 4 })
  })

  it('takes localhost as loopback even when the hosts file does not name it', async () => {
    expect(await look('localhost', { all: true })).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 }
    ])
  })

  it('ends a query under way when stopped, leaving nothing to hold the process', async () => {
    const { lookup, stop } = stoppableLookup(hosts)
    const ended = new Promise(resolve => lookup!('tracking.invalid', {}, error => resolve(error)))
    stop()
    expect(await ended).toMatchObject({ code: expect.stringMatching(/^(ENOTFOUND|EAI_AGAIN)$/) })
  })
})
