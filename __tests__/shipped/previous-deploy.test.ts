/**
 * The previous deploy, by the first rule that finds one: the previous-version input, a successful
 * deployment to the environment, the previous release, the previous successful run of the workflow.
 */
import { describe, expect, it } from '@jest/globals'
import nock from 'nock'
import { MAX_API_CALLS } from '../../src/shipped/github-client.ts'
import { lookUpShipped } from '../../src/shipped/lookup.ts'
import { history, REPOSITORY, sha } from './github-fixtures.ts'
import {
  API,
  lookupOptions,
  mockCompare,
  mockRuns,
  PREVIOUS,
  REPO,
  RUN_ID,
  useNock,
  VERSION
} from './github-nock.ts'

const { unmatched } = useNock()

describe('the previous deploy', () => {
  it('takes a previous-version SHA as given and compares from it', async () => {
    mockCompare(PREVIOUS, history(3))
    const { shipped, warning } = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({ previousSha: PREVIOUS, source: 'input', commitCount: 3 })
    expect(shipped.compareUrl).toBe(
      `https://github.com/${REPOSITORY}/compare/${PREVIOUS}...${VERSION}`
    )
    expect(shipped.apiCalls).toBe(1)
    expect(unmatched()).toEqual([])
  })

  it('resolves a previous-version tag to its SHA through the compare itself', async () => {
    mockCompare('v1.2.0', history(2), { resolvedBase: PREVIOUS })
    const { shipped } = await lookUpShipped(lookupOptions({ previousVersion: 'v1.2.0' }))
    expect(shipped).toMatchObject({ previousSha: PREVIOUS, source: 'input', commitCount: 2 })
    expect(shipped.apiCalls).toBe(1)
  })

  it("finds the newest earlier successful deployment to the environment, skipping this run's own", async () => {
    const failed = sha('failed-deploy')
    nock(API)
      .get(`${REPO}/deployments`)
      .query({ environment: 'production', per_page: '10' })
      .reply(200, [
        { id: 9, sha: VERSION, environment: 'production', created_at: '2026-03-01T10:00:00Z' },
        { id: 8, sha: failed, environment: 'production', created_at: '2026-02-02T00:00:00Z' },
        { id: 7, sha: PREVIOUS, environment: 'production', created_at: '2026-02-01T00:00:00Z' }
      ])
    nock(API)
      .get(`${REPO}/deployments/8/statuses`)
      .query({ per_page: '1' })
      .reply(200, [{ state: 'failure' }])
    nock(API)
      .get(`${REPO}/deployments/7/statuses`)
      .query({ per_page: '1' })
      .reply(200, [{ state: 'inactive' }])
    mockCompare(PREVIOUS, history(4))
    const { shipped, warning } = await lookUpShipped(lookupOptions({ environment: 'production' }))
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({ previousSha: PREVIOUS, source: 'deployment', commitCount: 4 })
    expect(shipped.apiCalls).toBe(4)
    expect(unmatched()).toEqual([])
  })

  it('falls through to the workflow runs when no candidate deployment succeeded', async () => {
    nock(API)
      .get(`${REPO}/deployments`)
      .query(true)
      .reply(200, [
        { id: 8, sha: sha('a'), created_at: '2026-02-02T00:00:00Z' },
        { id: 7, sha: sha('b'), created_at: '2026-02-01T00:00:00Z' },
        { id: 6, sha: sha('c'), created_at: '2026-01-01T00:00:00Z' }
      ])
    nock(API)
      .get(`${REPO}/deployments/8/statuses`)
      .query(true)
      .reply(200, [{ state: 'error' }])
    nock(API).get(`${REPO}/deployments/7/statuses`).query(true).reply(200, [])
    // A re-run of this very version is skipped, and so is this run.
    mockRuns([
      { id: Number(RUN_ID), sha: VERSION },
      { id: 4999, sha: VERSION },
      { id: 4998, sha: PREVIOUS }
    ])
    mockCompare(PREVIOUS, history(2))
    const { shipped, warning } = await lookUpShipped(lookupOptions({ environment: 'staging' }))
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({
      previousSha: PREVIOUS,
      source: 'workflow-run',
      runStartedAt: '2026-03-01T10:00:05Z',
      commitCount: 2
    })
    expect(shipped.apiCalls).toBe(MAX_API_CALLS)
    expect(unmatched()).toEqual([])
  })

  it('takes the previous published release on release events, skipping drafts and this one', async () => {
    nock(API)
      .get(`${REPO}/releases`)
      .query({ per_page: '10' })
      .reply(200, [
        { id: 3, tag_name: 'v2.0.0', draft: false, published_at: '2026-03-01T00:00:00Z' },
        { id: 2, tag_name: 'v1.9.0', draft: true, published_at: null },
        { id: 1, tag_name: 'v1.8.0', draft: false, published_at: '2026-02-01T00:00:00Z' }
      ])
    mockCompare('v1.8.0', history(5), { resolvedBase: PREVIOUS })
    const { shipped } = await lookUpShipped(
      lookupOptions({
        eventName: 'release',
        payload: { release: { id: 3, tag_name: 'v2.0.0', published_at: '2026-03-01T00:00:00Z' } }
      })
    )
    expect(shipped).toMatchObject({ previousSha: PREVIOUS, source: 'release', commitCount: 5 })
    expect(shipped.apiCalls).toBe(2)
  })

  it('falls through from releases to workflow runs when no earlier release exists', async () => {
    nock(API)
      .get(`${REPO}/releases`)
      .query(true)
      .reply(200, [
        { id: 3, tag_name: 'v1.0.0', draft: false, published_at: '2026-03-01T00:00:00Z' }
      ])
    mockRuns([{ id: 4998, sha: PREVIOUS }])
    mockCompare(PREVIOUS, history(1))
    const { shipped } = await lookUpShipped(
      lookupOptions({ eventName: 'release', payload: { release: { id: 3, tag_name: 'v1.0.0' } } })
    )
    expect(shipped).toMatchObject({ source: 'workflow-run', previousSha: PREVIOUS })
  })

  it('finds nothing, without a warning, on the first run of a workflow', async () => {
    mockRuns([{ id: Number(RUN_ID), sha: VERSION }])
    const { shipped, warning } = await lookUpShipped(lookupOptions())
    expect(warning).toBeUndefined()
    expect(shipped.previousSha).toBeUndefined()
    expect(shipped.commitCount).toBeUndefined()
    expect(shipped.apiCalls).toBe(2)
  })
})
