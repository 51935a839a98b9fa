/**
 * The lookup as a whole: it never throws, makes no call without a token or when nothing can be
 * new, falls back to the push payload, keeps what a failed later page cannot take away, and
 * works below GitHub Enterprise Server's /api/v3.
 */
import { describe, expect, it } from '@jest/globals'
import nock from 'nock'
import { lookUpShipped } from '../../src/shipped/lookup.ts'
import { history } from './github-fixtures.ts'
import {
  lookupOptions,
  mockCompare,
  PREVIOUS,
  REPO,
  RUN_ID,
  useNock,
  VERSION
} from './github-nock.ts'
import { TOKEN } from './github-fixtures.ts'

const { unmatched } = useNock()

describe('GitHub Enterprise Server', () => {
  it('calls below /api/v3, names calls below it, and links to the server', async () => {
    const root = 'https://ghes.example.com/api/v3'
    const scope = nock('https://ghes.example.com', {
      reqheaders: {
        authorization: `token ${TOKEN}`,
        'x-github-api-version': '2022-11-28',
        accept: 'application/vnd.github+json'
      }
    })
      .get(`/api/v3${REPO}/actions/runs/${RUN_ID}`)
      .reply(200, { workflow_id: 77, head_branch: 'main' })
      .get(`/api/v3${REPO}/actions/workflows/77/runs`)
      .query(true)
      .reply(200, { workflow_runs: [{ id: 1, head_sha: PREVIOUS }] })
    mockCompare(PREVIOUS, history(2), { root: `${root}/` })
    const { shipped, warning } = await lookUpShipped(
      lookupOptions({ apiUrl: root, serverUrl: 'https://ghes.example.com' })
    )
    expect(warning).toBeUndefined()
    expect(scope.isDone()).toBe(true)
    expect(shipped.compareUrl).toBe(
      `https://ghes.example.com/acme/shop/compare/${PREVIOUS}...${VERSION}`
    )
    expect(shipped.commitCount).toBe(2)
  })

  it('refuses an API URL that is not https, before any call', async () => {
    const { shipped, warning } = await lookUpShipped(
      lookupOptions({ apiUrl: 'http://ghes.example.com/api/v3' })
    )
    expect(shipped.apiCalls).toBe(0)
    expect(unmatched()).toEqual([])
    expect(warning).toContain('GITHUB_API_URL uses http:, not https:')
  })
})
