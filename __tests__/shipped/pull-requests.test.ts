/** Pull requests named by merge and squash commit messages, and the titles they lack. */
import { describe, expect, it } from '@jest/globals'
import { GitHubFaults } from '../../emulator/github.ts'
import {
  MAX_PULL_REQUEST_TITLES,
  MAX_PULL_REQUESTS,
  pullRequestInMessage,
  pullRequestsIn,
  readMissingTitles
} from '../../src/shipped/pull-requests.ts'
import { restartsFar, scansOf } from '../support/scans.ts'
import { history, queryFor, useFakeGitHub, withGitHub } from './fake-github.ts'

const URL = 'https://github.com/octo-org/octo-repo'
const GITHUB = { kind: 'github', web: URL } as const
const GITLAB_WEB = 'https://gitlab.example.com/acme/shop'
const pull = (number: number, title?: string) => ({
  number,
  ...(title ? { title } : {}),
  url: `${URL}/pull/${number}`
})

describe('pullRequestInMessage', () => {
  it.each([
    ['Add login (#41)', { number: 41, title: 'Add login' }],
    ['Fix (#12) again (#13)\n\nbody', { number: 13, title: 'Fix (#12) again' }],
    [
      'Merge pull request #42 from acme/cart\n\nFix   cart\n\nmore',
      { number: 42, title: 'Fix cart' }
    ],
    ['Merge pull request #7 from fork/x', { number: 7 }],
    [
      "Merge branch 'cart' into 'main'\n\nFix   cart\n\nCloses #3\n\nSee merge request acme/shop!42\n",
      { number: 42, title: 'Fix cart' }
    ],
    ["Merge branch 'x' into 'main'\n\nSee merge request acme/platform/shop!9", { number: 9 }],
    ['Merge branch x\n\nSee merge request acme/shop!42 and more', undefined],
    ['Mention #41 in passing', undefined],
    ['(#5) at the start is a title of its own', undefined],
    ['Nothing here', undefined]
  ])('%j', (message, expected) => {
    expect(pullRequestInMessage(message)).toEqual(expected)
  })

  describe('on GitLab', () => {
    const WEB = 'https://gitlab.example.com/acme/shop'
    const merge = (last: string) =>
      `Merge branch 'login' into 'main'\n\nAdd login\n\nCloses #3\n\n${last}\n`

    it.each([
      ['See merge request acme/shop!41', { number: 41, title: 'Add login' }],
      ['See merge request !41', { number: 41, title: 'Add login' }],
      [`See merge request ${WEB}/-/merge_requests/41`, { number: 41, title: 'Add login' }],
      [
        'See merge request https://GitLab.example.com/acme/shop/-/merge_requests/41',
        { number: 41, title: 'Add login' }
      ],
      ['See merge request https://gitlab.com/acme/shop/-/merge_requests/41', undefined],
      [
        'See merge request https://gitlab.example.com:8443/acme/shop/-/merge_requests/41',
        undefined
      ],
      [`See merge request ${WEB}/-/issues/41`, undefined]
    ])("reads a merge commit's last line %j, a URL only on the run's server", (last, expected) => {
      expect(pullRequestInMessage(merge(last), 'gitlab', WEB)).toEqual(expected)
    })

    it('reads no URL without a server, and a squash by its "(!N)", never "(#N)", an issue there', () => {
      const url = merge(`See merge request ${WEB}/-/merge_requests/41`)
      expect(pullRequestInMessage(url, 'gitlab')).toBeUndefined()
      expect(pullRequestInMessage('Fix cart (!42)\n\nCloses #7', 'gitlab', WEB)).toEqual({
        number: 42,
        title: 'Fix cart'
      })
      expect(pullRequestInMessage('Fix cart (#42)', 'gitlab', WEB)).toBeUndefined()
    })

    it('links each merge request on the forge', () => {
      const messages = [merge('See merge request !41'), 'Fix cart (!42)']
      expect(pullRequestsIn(messages, { kind: 'gitlab', web: WEB }).pullRequests).toEqual([
        { number: 41, title: 'Add login', url: `${WEB}/-/merge_requests/41` },
        { number: 42, title: 'Fix cart', url: `${WEB}/-/merge_requests/42` }
      ])
    })
  })

  it('cuts a title at 256 characters', () => {
    expect(pullRequestInMessage(`${'T'.repeat(300)} (#8)`)).toEqual({
      number: 8,
      title: 'T'.repeat(256)
    })
  })

  const LONG = 'x'.repeat(20_000)
  it.each([
    ['a title without its closing parenthesis', `${LONG} (#1`, 'github', undefined],
    ['a squash title far past the longest kept', `${'Fix  '.repeat(4_000)}(#7)`, 'github', 7],
    ['a suffix that starts again everywhere', '(#1'.repeat(7_000), 'github', undefined],
    ['a merge line of any length', `Merge pull request #42 from ${LONG}`, 'github', 42],
    ['a GitLab title without its closing parenthesis', `${LONG} (!1`, 'gitlab', undefined],
    [
      'a GitLab squash title far past the longest kept',
      `${'Fix  '.repeat(4_000)}(!7)`,
      'gitlab',
      7
    ],
    ['a GitLab suffix that starts again everywhere', '(!1'.repeat(7_000), 'gitlab', undefined],
    ['a last line of any length', `Merge\n\nSee merge request ${LONG}!9`, 'gitlab', undefined],
    [
      'a last line naming a URL of any length',
      `Merge\n\nSee merge request https://gitlab.example.com/${LONG}/-/merge_requests/9`,
      'gitlab',
      undefined
    ]
  ] as const)(
    'reads %s with no pattern that restarts far at each position',
    (_, message, host, number) => {
      const read: unknown[] = []
      const scans = scansOf(() => read.push(pullRequestInMessage(message, host, GITLAB_WEB)))
      expect(read).toEqual([number && expect.objectContaining({ number })])
      const restarting = scans.filter(scan => restartsFar(scan.pattern))
      expect(restarting.map(scan => String(scan.pattern))).toEqual([])
    }
  )
})

describe('pullRequestsIn', () => {
  it('lists each once, in the order of its first mention, with the title any of its messages gives', () => {
    const found = pullRequestsIn(
      ['Merge pull request #42 from acme/cart', 'Add login (#41)', 'plain', 'Fix the cart (#42)'],
      GITHUB
    )
    expect(found).toEqual({
      pullRequests: [pull(42, 'Fix the cart'), pull(41, 'Add login')],
      pullRequestCount: 2
    })
  })

  it(`keeps the newest ${MAX_PULL_REQUESTS}, counts them all, and takes titles read for the others`, () => {
    const messages = Array.from({ length: 30 }, (_, i) => `Merge pull request #${i + 1} from a/b`)
    const found = pullRequestsIn(messages, GITHUB, new Map([[30, 'Read from GitHub']]))
    expect(found.pullRequestCount).toBe(30)
    expect(found.pullRequests.map(pr => pr.number)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 11)
    )
    expect(found.pullRequests.at(-1)).toEqual(pull(30, 'Read from GitHub'))
  })

  it('links none on a host whose pull request pages are unknown', () => {
    expect(pullRequestsIn(['Add login (#41)'], { kind: 'github' }).pullRequests).toEqual([
      { number: 41, title: 'Add login' }
    ])
  })
})

describe('readMissingTitles', () => {
  const fake = useFakeGitHub(() => ({
    commits: history(2),
    pulls: [1, 2, 3, 4, 5].map(number => ({ number, title: `Title ${number}` }))
  }))
  const read = (messages: string[]) =>
    withGitHub(fake(), github => readMissingTitles(github, queryFor(fake()), messages))
  const merge = (number: number) => `Merge pull request #${number} from a/b`

  it(`reads the titles the messages lack, for the first ${MAX_PULL_REQUEST_TITLES} of them`, async () => {
    const { titles, failure } = await read([merge(1), 'Known (#2)', merge(3), merge(4), merge(5)])
    expect([...titles]).toEqual([
      [1, 'Title 1'],
      [3, 'Title 3'],
      [4, 'Title 4']
    ])
    expect(failure).toBeUndefined()
    expect(fake().requestsTo('GET /repos/*/*/pulls/*')).toHaveLength(3)
  })

  it('stops at the first refusal, keeping the titles read, and names it', async () => {
    fake().inject('GET /repos/*/*/pulls/3', GitHubFaults.forbidden)
    const { titles, failure } = await read([merge(1), merge(3), merge(4)])
    expect([...titles]).toEqual([[1, 'Title 1']])
    expect(failure?.message).toContain('pulls/3 answered HTTP 403')
    expect(failure?.message).toContain('and `pull-requests: read`')
    expect(fake().requests).toHaveLength(2)
  })
})
