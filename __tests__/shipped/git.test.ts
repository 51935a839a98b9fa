/**
 * The one way git runs: what it hands git, what it answers, where it cuts, and how it refuses a
 * folder it cannot read. What a lookup makes of git's answers is git-lookup.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gitEnvironment, gitIn } from '../../src/shipped/git.ts'
import { LookupError } from '../../src/shipped/warning.ts'
import { gitEnv, TestRepository } from '../support/git-repository.ts'

let root: string
let repo: TestRepository
let head: string
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'cta-git-')))
  repo = new TestRepository(join(root, 'shop'), gitEnv(root))
  head = repo.commit('Add login', { 'login.txt': 'x\n' })
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** git in `cwd`, with the test's own environment as a door hands it, until `signal` aborts. */
const gitAt = (cwd: string, signal = new AbortController().signal) =>
  gitIn(cwd, gitEnvironment(gitEnv(root)), signal)

describe('gitEnvironment', () => {
  it("hands git none of the door's GIT_ or locale variables, in any letter case, and keeps the rest", () => {
    const door = {
      PATH: '/usr/bin',
      HOME: '/home/ci',
      GIT_DIR: '/elsewhere',
      git_config_parameters: "'core.pager=x'",
      LC_ALL: 'fr_FR.UTF-8',
      LANG: 'de_DE.UTF-8',
      LANGUAGE: 'de'
    }
    expect(gitEnvironment(door)).toEqual({ PATH: '/usr/bin', HOME: '/home/ci' })
  })
})

describe('gitIn', () => {
  it('answers what git printed, and runs it with hooks and fsmonitor turned off', async () => {
    const git = gitAt(repo.path)
    expect(await git(['rev-parse', 'HEAD'])).toEqual({ out: `${head}\n`, cut: false })
    const config = await git(['config', '--get-regexp', '^core\\.(hookspath|fsmonitor)$'])
    expect(config.out.split('\n').sort()).toEqual([
      '',
      'core.fsmonitor false',
      'core.hookspath /dev/null'
    ])
  })

  it('says what git said on stderr when it ends with an error', async () => {
    const answer = await gitAt(repo.path)(['rev-parse', '--verify', 'no-such-ref'])
    expect(answer.out).toBe('')
    expect(answer.said).toMatch(/fatal: Needed a single revision/)
  })

  it('cuts the answer at the bound, and says it was cut', async () => {
    const answer = await gitAt(repo.path)(['log', '--format=%H%n%H%n%H'], 50)
    expect(answer).toEqual({ out: `${head}\n${head.slice(0, 9)}`, cut: true })
  })

  it('holds only what `keep` keeps of each chunk git prints', async () => {
    const answer = await gitAt(repo.path)(['rev-parse', 'HEAD'], undefined, printed =>
      printed.subarray(0, 7)
    )
    expect(answer.out).toBe(head.slice(0, 7))
  })

  it('refuses a folder that is no checkout, and one that does not exist, in words', async () => {
    const plain = mkdtempSync(join(root, 'plain-'))
    const refusal = await gitAt(plain)(['rev-parse', 'HEAD']).catch((error: unknown) => error)
    expect(refusal).toEqual(new LookupError(`${plain} is not in a git checkout`))
    const missing = join(root, 'missing')
    const failure = await gitAt(missing)(['rev-parse', 'HEAD']).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(LookupError)
    expect((failure as Error).message).toMatch(/^git could not start in .*missing \(ENOENT/)
  })

  it('starts nothing once its signal is aborted, and rejects with its reason', async () => {
    const cancelled = AbortSignal.abort(new Error('cancelled'))
    await expect(gitAt(repo.path, cancelled)(['rev-parse', 'HEAD'])).rejects.toThrow('cancelled')
  })
})
