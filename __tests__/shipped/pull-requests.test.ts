/** Pull requests named by merge and squash commit messages, and their titles. */
import { describe, expect, it } from '@jest/globals'
import nock from 'nock'
import { lookUpShipped } from '../../src/shipped/lookup.ts'
import { pullRequestInMessage } from '../../src/shipped/pull-requests.ts'
import { sha, type FakeCommit } from './github-fixtures.ts'
import { API, lookupOptions, mockCompare, PREVIOUS, REPO, useNock } from './github-nock.ts'

useNock()

describe('pull requests', () => {
  it('come from squash and merge messages, and GET /pulls gives the titles the messages lack', async () => {
    const commits: FakeCommit[] = [
      { sha: sha('m1'), message: 'Add login (#41)', name: 'A' },
      { sha: sha('m2'), message: 'Merge pull request #42 from acme/cart', name: 'B' },
      { sha: sha('m3'), message: 'plain commit', name: 'C' },
      { sha: sha('m4'), message: 'Add login again (#41)', name: 'D' }
    ]
    mockCompare(PREVIOUS, commits)
    nock(API)
      .get(`${REPO}/pulls/42`)
      .reply(200, { number: 42, title: 'Fix cart', html_url: 'https://evil.example' })
    const { shipped, warning } = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
    expect(warning).toBeUndefined()
    expect(shipped.pullRequests).toEqual([
      { number: 41, title: 'Add login', url: 'https://github.com/acme/shop/pull/41' },
      { number: 42, title: 'Fix cart', url: 'https://github.com/acme/shop/pull/42' }
    ])
    expect(shipped.pullRequestCount).toBe(2)
    expect(shipped.apiCalls).toBe(2)
  })
})

describe('pullRequestInMessage', () => {
  it.each([
    ['Add login (#41)', { number: 41, title: 'Add login' }],
    ['Fix (#12) again (#13)\n\nbody', { number: 13, title: 'Fix (#12) again' }],
    [
      'Merge pull request #42 from acme/cart\n\nFix cart\n\nmore',
      { number: 42, title: 'Fix cart' }
    ],
    ['Merge pull request #7 from fork/x', { number: 7 }],
    ['Mention #41 in passing', undefined],
    ['(#5) at the start is a title of its own', undefined],
    ['Nothing here', undefined]
  ])('%j', (message, expected) => {
    expect(pullRequestInMessage(message)).toEqual(expected)
  })

  it('reads a very long line in linear time', () => {
    const started = Date.now()
    pullRequestInMessage(`${' '.repeat(200_000)}x (#1`)
    expect(Date.now() - started).toBeLessThan(200)
  })
})
