/** What a push event's payload says the push brought, read without trusting its shape. */
import { describe, expect, it } from '@jest/globals'
import { MAX_PUSH_PAYLOAD_COMMITS, shippedFromPushPayload } from '../../src/shipped/push-payload.ts'
import { sha } from './fake-github.ts'

const VERSION = sha(12)
const BEFORE = sha(9)

function commit(n: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const files = { added: [], modified: [], removed: [] }
  return { id: sha(n), message: `Commit ${n}`, author: { name: 'Alice' }, ...files, ...extra }
}

const push = (commits: unknown, extra = {}) => ({
  before: BEFORE,
  after: VERSION,
  commits,
  ...extra
})

describe('shippedFromPushPayload', () => {
  it('gives the previous deploy, the commits, each changed file once and the messages', () => {
    const shipped = shippedFromPushPayload(
      'push',
      push([
        commit(10, {
          message: 'Add login (#41)\n\nmore',
          author: { name: 'Alice', username: 'alice' },
          added: ['a.ts'],
          modified: ['b.ts']
        }),
        commit(11, { modified: ['a.ts', 'b.ts'], removed: ['c.ts'] })
      ]),
      VERSION.toUpperCase()
    )
    expect(shipped).toEqual({
      previousSha: BEFORE,
      commitCount: 2,
      commits: [
        { sha: sha(10), message: 'Add login (#41)', author: 'alice' },
        { sha: sha(11), message: 'Commit 11', author: 'Alice' }
      ],
      messages: ['Add login (#41)\n\nmore', 'Commit 11'],
      rollback: false,
      changedFiles: [{ path: 'a.ts' }, { path: 'b.ts' }, { path: 'c.ts' }],
      changedFilesComplete: true,
      pullRequestsComplete: true
    })
  })

  it('gives each commit its timestamp, only when it is a date', () => {
    const shipped = shippedFromPushPayload(
      'push',
      push([commit(1, { timestamp: '2026-03-01T09:59:00+01:00' }), commit(2, { timestamp: 'x' })]),
      VERSION
    )
    expect(shipped?.commits.map(c => c.committedAt)).toEqual([
      '2026-03-01T09:59:00+01:00',
      undefined
    ])
  })

  it('leaves the counts and the files unknown when the payload may have been cut, and keeps every commit', () => {
    const commits = Array.from({ length: MAX_PUSH_PAYLOAD_COMMITS }, (_, i) => commit(i + 1))
    const shipped = shippedFromPushPayload('push', push(commits), VERSION)
    expect(shipped?.commitCount).toBeUndefined()
    expect(shipped?.changedFilesComplete).toBe(false)
    expect(shipped?.pullRequestsComplete).toBe(false)
    expect(shipped?.commits).toHaveLength(MAX_PUSH_PAYLOAD_COMMITS)
    expect(shipped?.messages).toHaveLength(MAX_PUSH_PAYLOAD_COMMITS)
  })

  it.each([
    ['another event', 'workflow_dispatch', push([])],
    ['a new branch (before is all zeros)', 'push', push([], { before: '0'.repeat(40) })],
    ['a push of another commit', 'push', push([], { after: sha(13) })]
  ])('says nothing for %s', (_, eventName, payload) => {
    expect(shippedFromPushPayload(eventName, payload, VERSION)).toBeUndefined()
  })

  it.each([
    ['a payload that is not an object', 'push'],
    ['commits that are not a list', push('many')],
    ['file lists that are not lists', push([{ id: sha(1), added: 'a.ts' }])],
    ['commits of the wrong shape', push([null, 7, { id: 3, author: 'x' }])]
  ])('never throws on %s', (_, payload) => {
    expect(() => shippedFromPushPayload('push', payload, VERSION)).not.toThrow()
  })
})
