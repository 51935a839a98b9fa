/** A remote read for its host and path only: never its credentials, never a path that climbs out. */
import { describe, expect, it } from '@jest/globals'
import { remoteRepository } from '../../src/shipped/remote.ts'

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
