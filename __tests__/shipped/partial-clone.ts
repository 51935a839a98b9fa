/**
 * Repositories that lack objects, as a partial clone does, whose promisor remote a lazy fetch of
 * a missing object would reach by running the repository's own core.sshCommand.
 */
import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { TestRepository } from '../support/git-repository.ts'

/** The repository made a partial clone of a promisor remote reached by `sshCommand`. */
export function promisor(repo: TestRepository, sshCommand: string): void {
  for (const [name, value] of [
    ['core.repositoryformatversion', '1'],
    ['extensions.partialClone', 'origin'],
    ['remote.origin.url', 'ssh://evil.invalid/x.git'],
    ['remote.origin.promisor', 'true'],
    ['protocol.ssh.allow', 'always'],
    ['core.sshCommand', sshCommand]
  ])
    repo.git(['config', name, value])
}

/** The object removed from the repository (loose, as the test repositories keep them). */
export function lose(repo: TestRepository, sha: string): void {
  rmSync(join(repo.path, '.git', 'objects', sha.slice(0, 2), sha.slice(2)))
}

/** Three commits, the second lost: a lazy fetch of it runs `sshCommand`. */
export function partialClone(path: string, env: Record<string, string>, sshCommand: string) {
  const repo = new TestRepository(path, env)
  const commits = [1, 2, 3].map(n => repo.commit(`Change ${n}`, { [`f${n}.txt`]: `${n}\n` }))
  promisor(repo, sshCommand)
  lose(repo, commits[1])
  return { repo, commits }
}

/** The processes whose command line holds `text`, by id. */
export function running(text: string): number[] {
  const found = (() => {
    try {
      return execFileSync('pgrep', ['-f', text], { encoding: 'utf8' })
    } catch {
      return '' // pgrep exits 1 when it finds none
    }
  })()
  return found.split('\n').filter(Boolean).map(Number)
}
