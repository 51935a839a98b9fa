/** What a push event's payload says the push brought, with no API call. */
import { describe, expect, it } from '@jest/globals'
import nock from 'nock'
import { lookUpShipped } from '../../src/shipped/lookup.ts'
import { MAX_PUSH_PAYLOAD_COMMITS, shippedFromPushPayload } from '../../src/shipped/push-payload.ts'
import { REPOSITORY, sha } from './github-fixtures.ts'
import { API, lookupOptions, REPO, RUN_ID, useNock, VERSION } from './github-nock.ts'

const { unmatched } = useNock()

describe('the push payload', () => {
  const before = sha('before')
  const pushPayload = {
    before,
    after: VERSION,
    compare: 'https://evil.example/compare',
    commits: [
      {
        id: sha('p1'),
        message: 'Add login (#41)\n\nmore',
        author: { name: 'Alice', username: 'alice' },
        added: ['a.ts'],
        modified: [],
        removed: []
      },
      {
        id: sha('p2'),
        message: 'Merge pull request #42 from acme/cart\n\nFix cart',
        author: { name: 'Bob' },
        added: [],
        modified: ['b.ts'],
        removed: ['c.ts']
      }
    ]
  }

  it('with no token, uses the payload and makes no API call', async () => {
    const { shipped, warning } = await lookUpShipped(
      lookupOptions({ token: '', eventName: 'push', payload: pushPayload })
    )
    expect(unmatched()).toEqual([])
    expect(shipped).toMatchObject({
      previousSha: before,
      source: 'push-payload',
      commitCount: 2,
      apiCalls: 0,
      compareUrl: `https://github.com/${REPOSITORY}/compare/${before}...${VERSION}`,
      changedFiles: [{ path: 'a.ts' }, { path: 'b.ts' }, { path: 'c.ts' }],
      changedFilesComplete: true
    })
    expect(shipped.commits).toEqual([
      { sha: sha('p1'), message: 'Add login (#41)', author: 'alice' },
      { sha: sha('p2'), message: 'Merge pull request #42 from acme/cart', author: 'Bob' }
    ])
    expect(shipped.pullRequests.map(pull => [pull.number, pull.title])).toEqual([
      [41, 'Add login'],
      [42, 'Fix cart']
    ])
    expect(warning).toMatch(/^No github-token: .*push payload/)
  })

  it('ignores a payload whose before is all zeros (a new branch) or whose after is another commit', async () => {
    for (const payload of [
      { ...pushPayload, before: '0'.repeat(40) },
      { ...pushPayload, after: sha('other') }
    ]) {
      const { shipped } = await lookUpShipped(
        lookupOptions({ token: '', eventName: 'push', payload })
      )
      expect(shipped.previousSha).toBeUndefined()
      expect(shipped.commits).toEqual([])
    }
  })

  it('with no token and no push, makes no call and says why nothing is known', async () => {
    const { shipped, warning } = await lookUpShipped(lookupOptions({ token: '' }))
    expect(unmatched()).toEqual([])
    expect(shipped.apiCalls).toBe(0)
    expect(warning).toMatch(/^No github-token: the change is recorded without the commits/)
  })

  it('is the fallback when the API refuses the token', async () => {
    nock(API).get(`${REPO}/actions/runs/${RUN_ID}`).reply(401, { message: 'Bad credentials' })
    const { shipped, warning } = await lookUpShipped(
      lookupOptions({ eventName: 'push', payload: pushPayload })
    )
    expect(shipped).toMatchObject({ source: 'push-payload', commitCount: 2, apiCalls: 1 })
    expect(warning).toContain(
      'GET /repos/acme/shop/actions/runs/5000 answered HTTP 401 ("Bad credentials")'
    )
    expect(warning).toContain('push payload')
  })
})

describe('shippedFromPushPayload', () => {
  const before = sha('before')

  function commit(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      id: sha(id),
      message: `Commit ${id}`,
      author: { name: 'Alice' },
      added: [],
      modified: [],
      removed: [],
      ...extra
    }
  }

  it('lists each changed file once, however many commits touched it', () => {
    const shipped = shippedFromPushPayload(
      'push',
      {
        before,
        after: VERSION,
        commits: [
          commit('1', { added: ['a.ts'], modified: ['b.ts'] }),
          commit('2', { modified: ['a.ts', 'b.ts'], removed: ['c.ts'] })
        ]
      },
      VERSION
    )
    expect(shipped?.changedFiles).toEqual([{ path: 'a.ts' }, { path: 'b.ts' }, { path: 'c.ts' }])
    expect(shipped?.changedFilesComplete).toBe(true)
  })

  it('gives each commit its timestamp, only when it is a valid one', () => {
    const shipped = shippedFromPushPayload(
      'push',
      {
        before,
        after: VERSION,
        commits: [
          commit('1', { timestamp: '2026-03-01T09:59:00+01:00' }),
          commit('2', { timestamp: 'not a time' }),
          commit('3', { timestamp: 1772359140 })
        ]
      },
      VERSION
    )
    expect(shipped?.commits.map(c => c.committedAt)).toEqual([
      '2026-03-01T09:59:00+01:00',
      undefined,
      undefined
    ])
  })

  it('leaves the count and the files unknown when the payload may have been cut', () => {
    const commits = Array.from({ length: MAX_PUSH_PAYLOAD_COMMITS }, (_, i) => commit(`${i}`))
    const shipped = shippedFromPushPayload('push', { before, after: VERSION, commits }, VERSION)
    expect(shipped?.commitCount).toBeUndefined()
    expect(shipped?.changedFilesComplete).toBe(false)
    expect(shipped?.commits).toHaveLength(50)
  })

  it.each([
    ['a payload that is not an object', 'push'],
    ['commits that are not a list', { before, after: VERSION, commits: 'many' }],
    ['file lists that are not lists', { before, after: VERSION, commits: [{ added: 'a.ts' }] }],
    ['commits of the wrong shape', { before, after: VERSION, commits: [null, 7, { id: 3 }] }]
  ])('never throws on %s', (_, payload) => {
    expect(() => shippedFromPushPayload('push', payload, VERSION)).not.toThrow()
  })
})
