/** What a lookup found before it found anything, and each forge's compare view of two ends. */
import { describe, expect, it } from '@jest/globals'
import { compareUrl, emptyShipped, type Forge } from '../../src/shipped/types.ts'

describe('compareUrl', () => {
  const FROM = '9f2c1d0e8b7a69584736251403f2e1d0c9b8a796'
  const TO = '3f786850e387550fdab836ed7e6dc881de23001b'
  const WEB = 'https://git.example.com/acme/shop'

  it.each([
    ['github', `${WEB}/compare/${FROM}...${TO}`],
    ['gitlab', `${WEB}/-/compare/${FROM}...${TO}`],
    // Bitbucket Cloud names the newer end first.
    ['bitbucket', `${WEB}/branches/compare/${TO}%0D${FROM}`],
    ['gitea', `${WEB}/compare/${FROM}...${TO}`]
  ] as const)("is %s's own page of the two ends", (kind, url) => {
    expect(compareUrl({ kind, web: WEB }, FROM, TO)).toBe(url)
  })

  it('encodes each end, so that a branch or a tag stays one part of the path', () => {
    const forge: Forge = { kind: 'gitlab', web: 'https://gitlab.example.com/acme/shop' }
    expect(compareUrl(forge, 'release/2 rc#1', 'v1.4?x=1')).toBe(
      'https://gitlab.example.com/acme/shop/-/compare/release%2F2%20rc%231...v1.4%3Fx%3D1'
    )
  })

  it('is none on a host whose pages are unknown', () => {
    expect(compareUrl({ kind: 'github' }, FROM, TO)).toBeUndefined()
  })
})

describe('emptyShipped', () => {
  it('knows nothing, and claims nothing complete: no commit, no pull request, no file', () => {
    expect(emptyShipped()).toEqual({
      commits: [],
      messages: [],
      pullRequests: [],
      pullRequestCount: 0,
      pullRequestsComplete: false,
      rollback: false,
      changedFilesComplete: false,
      apiCalls: 0
    })
  })

  it('is a new value each time: what one lookup adds is in no other', () => {
    const first = emptyShipped()
    first.commits.push({ sha: 'a'.repeat(40), message: 'Add login' })
    expect(emptyShipped().commits).toEqual([])
  })
})
