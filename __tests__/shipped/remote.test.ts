/** A remote read for its host and path only: never its credentials, never a path that climbs out. */
import { describe, expect, it } from '@jest/globals'
import { remoteRepository, repositoryPage } from '../../src/shipped/remote.ts'

describe('remoteRepository', () => {
  it.each([
    ['https://user:pw@git.example.com/acme/shop.git', 'git.example.com', 'acme/shop'],
    ['https://GitHub.com/acme/shop', 'github.com', 'acme/shop'],
    ['git@gitlab.com:acme/platform/shop.git', 'gitlab.com', 'acme/platform/shop'],
    ['ssh://git@git.example.com:2222/acme/shop.git', 'git.example.com', 'acme/shop'],
    ['https://git.example.com/acme/shop.git/', 'git.example.com', 'acme/shop']
  ])('reads %s as %s and %s', (remote, host, path) => {
    expect(remoteRepository(remote)).toEqual({ host, path })
  })

  it.each(['/srv/git/shop.git', 'C:\\repos\\shop', '../shop', 'file:///srv/git/shop.git', ''])(
    'finds no repository in the folder %j',
    remote => {
      expect(remoteRepository(remote)).toBeUndefined()
    }
  )
})

describe('remoteRepository and a path with "." or ".." segments', () => {
  it.each([
    'https://github.com/acme%2F..%2F..%2Fevil/x.git',
    'https://github.com/acme/%2e%2e/evil/x.git',
    'git@github.com:acme/../evil/x.git',
    'ssh://git@github.com/./x.git'
  ])('finds no repository in %s', remote => {
    expect(remoteRepository(remote)).toBeUndefined()
  })
})

describe('repositoryPage', () => {
  it.each([
    ['git@github.com:Acme/Shop.git', 'https://github.com/Acme/Shop', 'github'],
    ['ssh://git@gitlab.com/acme/shop.git', 'https://gitlab.com/acme/shop', 'gitlab'],
    [
      'https://x-token-auth:secret@bitbucket.org/acme/shop.git',
      'https://bitbucket.org/acme/shop',
      'bitbucket'
    ],
    [
      'https://user:pw@git.example.com:8443/acme/shop.git',
      'https://git.example.com:8443/acme/shop',
      undefined
    ]
  ])('%s is %s, without credentials', (remote, url, provider) => {
    expect(repositoryPage(remote)).toEqual({ url, provider })
  })

  it("converts an ssh remote only on a known forge or the run's own server", () => {
    expect(repositoryPage('git@git.example.com:acme/shop.git')).toBeUndefined()
    expect(
      repositoryPage('git@ghe.example.com:acme/shop.git', {
        url: 'https://ghe.example.com',
        kind: 'github'
      })
    ).toEqual({
      url: 'https://ghe.example.com/acme/shop',
      provider: 'github'
    })
  })
})
