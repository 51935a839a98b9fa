/**
 * What shipped, read from real repositories built once in a temporary folder with fixed dates:
 * tags, a GitLab merge, a squash merge, a revert, a rename, a migration, hostile history, messages
 * of 17 MiB, past the log's whole bound (made by git fast-import), shallow clones made with `git clone --depth` from
 * a file:// URL, partial clones that lack a commit or a file, and traps for any program the
 * repository's configuration names. No git is mocked.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs'
import { readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CommandContext } from '../../src/commands/command.ts'
import { findTriage } from '../../src/commands/triage.ts'
import { MAX_COMMIT_TEXT_READ_CHARS, MAX_COMPARE_FILES } from '../../src/shipped/compare.ts'
import { shippedMetadata } from '../../src/shipped/metadata.ts'
import { gitEnvironment } from '../../src/shipped/git.ts'
import {
  lookUpInCheckout,
  MAX_COMMITS_READ,
  type GitLookupOptions
} from '../../src/shipped/git-lookup.ts'
import { emptyShipped, type Shipped } from '../../src/shipped/types.ts'
import { gitEnv, TestRepository } from '../support/git-repository.ts'
import { lose, partialClone, promisor, running } from './partial-clone.ts'

let root: string
let shop: TestRepository
let repo: string
/** git's own environment for the fixtures: no system or user configuration, fixed names. */
let env: Record<string, string>
const sha: Record<string, string> = {}

const ADVICE = { previousVersion: '--previous-version' }
const HOSTILE_MESSAGE =
  'Hostile ::error::title\u2028next\u0007 `code`\n\n[click](https://evil.example) <b>x</b>\u001b[31m\r\n::set-output name=x::y'
const HOSTILE_AUTHOR = 'Mallory\u0007 ::warning::x\u2028'
const HOSTILE_PATH = 'hostile/\u0007bell\n::error::line\u2028.txt'
const ORIGIN = 'https://user:s3cret-token@gitlab.com/acme/shop.git'

function git(cwd: string, args: string[], input?: string): string {
  const options = { cwd, input, env, encoding: 'utf8' as const }
  return execFileSync('git', args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] }).trim()
}

const LOGIN = Array.from({ length: 20 }, (_, i) => `export const line${i} = ${i}\n`).join('')

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'cta-git-lookup-')))
  mkdirSync(join(root, 'home'))
  env = gitEnv(join(root, 'home'))
  repo = join(root, 'shop')
  shop = new TestRepository(repo, env)
  sha.initial = shop.commit('Initial commit', { 'README.md': '# Shop\n', 'src/login.ts': LOGIN })
  shop.dated(['tag', '-a', 'v1.0.0', '-m', 'v1.0.0'])
  sha.login = shop.commit('Add login form (#41)', {
    'src/login.ts': `${LOGIN}export const f = 1\n`
  })
  shop.git(['checkout', '-q', '-b', 'cart'])
  sha.cart = shop.commit('Fix the cart', { 'src/cart.ts': 'export const cart = 2\n' }, 'Bob')
  shop.git(['checkout', '-q', 'main'])
  sha.banner = shop.commit('Add a banner', { 'src/banner.ts': 'export const banner = 3\n' })
  const merge = "Merge branch 'cart' into 'main'\n\nFix the cart\n\nSee merge request acme/shop!42"
  sha.merge = shop.dated(['merge', '-q', '--no-ff', 'cart', '-m', merge])
  sha.migration = shop.commit('Add the orders table', {
    'db/migrations/002_orders.sql': 'create;\n'
  })
  shop.git(['mv', 'src/login.ts', 'src/auth-login.ts'])
  sha.rename = shop.dated(['commit', '-q', '-m', 'Move login'])
  sha.revert = shop.dated(['revert', '--no-edit', sha.banner])
  sha.hostile = shop.commit(HOSTILE_MESSAGE, { [HOSTILE_PATH]: 'x\n' }, HOSTILE_AUTHOR)
  shop.dated(['tag', '-a', 'v1.1.0', '-m', 'v1.1.0'])
  shop.git(['remote', 'add', 'origin', ORIGIN])
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

function lookUp(overrides: Partial<GitLookupOptions> = {}) {
  return lookUpInCheckout({
    cwd: repo,
    env,
    version: sha.hostile,
    ci: 'gitlab',
    advice: ADVICE,
    ...overrides
  })
}

describe('the range since the previous deploy', () => {
  it('reads the tag before the version’s, as its commit, and everything since, oldest first', async () => {
    const { shipped, warning } = await lookUp({ version: 'v1.1.0' })
    expect(warning).toBeUndefined()
    const tagObject = git(repo, ['rev-parse', 'v1.0.0'])
    expect(tagObject).not.toBe(sha.initial)
    expect(shipped).toMatchObject({
      readFrom: 'git',
      previousSha: sha.initial,
      source: 'previous-tag',
      commitCount: 8,
      // On gitlab.com "(#41)" names an issue; "!42" is the one merge request.
      pullRequestCount: 1,
      pullRequestsComplete: true,
      rollback: false,
      changedFilesComplete: true
    })
    const order = ['login', 'cart', 'banner', 'merge', 'migration', 'rename', 'revert', 'hostile']
    expect(shipped?.commits.map(c => c.sha)).toEqual(order.map(name => sha[name]))
    expect(shipped?.commits[0]).toEqual({
      sha: sha.login,
      message: 'Add login form (#41)',
      author: 'Alice',
      committedAt: '2026-03-02T12:00:00+00:00'
    })
    expect(shipped?.commits[1].author).toBe('Bob')
    expect(shipped?.messages[6]).toBe(`Revert "Add a banner"\n\nThis reverts commit ${sha.banner}.`)
  })

  it('names merge requests by GitLab’s last line on GitLab, where "(#41)" is an issue, linked on the host', async () => {
    const { shipped } = await lookUp({ version: 'v1.1.0' })
    expect(shipped?.forge).toEqual({ kind: 'gitlab', web: 'https://gitlab.com/acme/shop' })
    expect(shipped?.pullRequests).toEqual([
      { number: 42, title: 'Fix the cart', url: 'https://gitlab.com/acme/shop/-/merge_requests/42' }
    ])
  })

  it('lists the changed paths with renames, exactly as git gives them, and no reverted file', async () => {
    const { shipped } = await lookUp({ version: 'v1.1.0' })
    expect(shipped?.changedFiles).toEqual(
      expect.arrayContaining([
        { path: 'src/auth-login.ts', previousPath: 'src/login.ts' },
        { path: 'db/migrations/002_orders.sql' },
        { path: 'src/cart.ts' },
        { path: HOSTILE_PATH }
      ])
    )
    expect(shipped?.changedFiles).toHaveLength(4)
  })

  it('keeps hostile text as data: the message, the author and the path', async () => {
    const { shipped } = await lookUp()
    const last = shipped?.commits.at(-1)
    expect(last?.author).toBe('Mallory\u0007 ::warning::x')
    expect(shipped?.messages.at(-1)).toBe(HOSTILE_MESSAGE.replace('\r\n', '\n'))
  })

  it('never lets the remote’s credentials reach a link', async () => {
    const found = await lookUp({ version: 'v1.1.0' })
    expect(found.shipped?.compareUrl).toBe(
      `https://gitlab.com/acme/shop/-/compare/${sha.initial}...${sha.hostile}`
    )
    expect(JSON.stringify(found)).not.toContain('s3cret-token')
  })
})

describe('the previous deploy, by the first rule that names one', () => {
  it('takes previous-version first, then the previous build, then the tag, then the push', async () => {
    const all = {
      version: 'v1.1.0',
      previousVersion: sha.merge,
      previousBuild: sha.migration,
      previousPush: sha.revert
    }
    const source = async (options: Partial<GitLookupOptions>) => {
      const { shipped } = await lookUp(options)
      return [shipped?.source, shipped?.previousSha]
    }
    expect(await source(all)).toEqual(['input', sha.merge])
    expect(await source({ ...all, previousVersion: undefined })).toEqual([
      'previous-build',
      sha.migration
    ])
    const noBuild = { ...all, previousVersion: undefined, previousBuild: undefined }
    expect(await source(noBuild)).toEqual(['previous-tag', sha.initial])
    expect(await source({ ...noBuild, version: sha.hostile })).toEqual([
      'previous-push',
      sha.revert
    ])
    // The CI's tag for this build, when the version is a SHA.
    expect(await source({ version: sha.hostile, tag: 'v1.1.0' })).toEqual([
      'previous-tag',
      sha.initial
    ])
  })

  it('takes a tag or a branch as previous-version, and reads HEAD when the version is no name git knows', async () => {
    const { shipped } = await lookUp({ version: 'build-2026.03.02', previousVersion: 'v1.0.0' })
    expect(shipped).toMatchObject({ previousSha: sha.initial, commitCount: 8 })
  })

  it('carries the head commit only, count unknown, when no rule names one (a new branch’s push)', async () => {
    const { shipped, warning } = await lookUp({ previousPush: '0'.repeat(40) })
    expect(warning).toBeUndefined()
    expect(shipped?.previousSha).toBeUndefined()
    expect(shipped?.commitCount).toBeUndefined()
    expect(shipped?.commits.map(c => c.sha)).toEqual([sha.hostile])
    expect(shipped?.pullRequestsComplete).toBe(false)
    expect(shipped?.changedFiles).toBeUndefined()
  })

  it('says in one warning which previous version git does not know', async () => {
    const { shipped, warning } = await lookUp({ previousVersion: 'v0.9.9' })
    expect(warning).toBe(
      'Could not look up everything this change ships: --previous-version names "v0.9.9", which is no commit in this checkout. The change is recorded without the commits it ships.'
    )
    expect(shipped?.commits).toHaveLength(1)
    expect(shipped?.previousSha).toBeUndefined()
  })

  it('records a rollback with no commits and no count, and the paths it takes back', async () => {
    const { shipped, warning } = await lookUp({ version: 'v1.0.0', previousVersion: 'v1.1.0' })
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({ rollback: true, previousSha: sha.hostile, commits: [] })
    expect(shipped?.commitCount).toBeUndefined()
    // From the rolled-back version to the older one: what the rollback undoes, renames included.
    expect(shipped?.changedFiles).toEqual(
      expect.arrayContaining([
        { path: 'src/login.ts', previousPath: 'src/auth-login.ts' },
        { path: 'db/migrations/002_orders.sql' },
        { path: 'src/cart.ts' },
        { path: HOSTILE_PATH }
      ])
    )
    expect(shipped).toMatchObject({ changedFilesComplete: true })
    expect(shipped?.changedFiles).toHaveLength(4)
  })

  it('says no path can be read when no rule names a previous deploy, and not when one names an unknown commit', async () => {
    const first = await lookUp({ previousPush: '0'.repeat(40) })
    expect(first.shipped?.pathsUnknown).toBe('no previous deploy')
    const unknown = await lookUp({ previousVersion: 'v0.9.9' })
    expect(unknown.shipped?.pathsUnknown).toBeUndefined()
  })

  it('counts no commit when the previous deploy is the version', async () => {
    const { shipped } = await lookUp({ previousVersion: sha.hostile })
    expect(shipped).toMatchObject({ commitCount: 0, commits: [], rollback: false })
    expect(shipped).toMatchObject({ pullRequestsComplete: true, changedFiles: [] })
  })
})

describe('links on the origin remote’s host', () => {
  const PREVIOUS = () => sha.initial
  it.each([
    [
      'https://user:s3cret-token@github.com/acme/shop.git',
      undefined,
      (h: string) => `https://github.com/acme/shop/compare/${PREVIOUS()}...${h}`,
      'https://github.com/acme/shop/pull/41'
    ],
    [
      'ssh://git@ghes.example.com:2222/acme/shop.git',
      { kind: 'github', url: 'https://ghes.example.com' },
      (h: string) => `https://ghes.example.com/acme/shop/compare/${PREVIOUS()}...${h}`,
      'https://ghes.example.com/acme/shop/pull/41'
    ],
    [
      'https://gitlab-ci-token:s3cret-token@gitlab.example.com/acme/platform/shop.git',
      { kind: 'gitlab', url: 'https://gitlab.example.com' },
      (h: string) => `https://gitlab.example.com/acme/platform/shop/-/compare/${PREVIOUS()}...${h}`,
      'https://gitlab.example.com/acme/platform/shop/-/merge_requests/42'
    ],
    [
      'git@bitbucket.org:acme/shop.git',
      undefined,
      (h: string) => `https://bitbucket.org/acme/shop/branches/compare/${h}%0D${PREVIOUS()}`,
      'https://bitbucket.org/acme/shop/pull-requests/41'
    ],
    ['https://s3cret-token@git.example.com/acme/shop.git', undefined, undefined, undefined],
    // Decoded, the path climbs out of acme/: no link to github.com/evil/x.
    ['https://github.com/acme%2F..%2F..%2Fevil/x.git', undefined, undefined, undefined],
    [
      'ssh://git@ghes.example.com/acme/shop.git',
      { kind: 'github', url: 'https://github.example.org' },
      undefined,
      undefined
    ]
  ] as const)('%s', async (remote, server, compare, pull) => {
    git(repo, ['remote', 'set-url', 'origin', remote])
    try {
      const found = await lookUp({ version: 'v1.1.0', server })
      expect(found.shipped?.compareUrl).toBe(compare?.(sha.hostile))
      expect(found.shipped?.pullRequests[0].url).toBe(pull)
      expect(JSON.stringify(found)).not.toContain('s3cret-token')
    } finally {
      git(repo, [
        'remote',
        'set-url',
        'origin',
        'https://user:s3cret-token@gitlab.com/acme/shop.git'
      ])
    }
  })
})

describe('a version the checkout does not have', () => {
  it('as a SHA: one warning, nothing read from HEAD in its place, and why no path can be read', async () => {
    for (const version of ['feedface'.repeat(5), 'feedfac']) {
      expect(await lookUp({ version, previousVersion: 'v1.0.0' })).toEqual({
        shipped: { ...emptyShipped(), pathsUnknown: 'version is not a commit' },
        warning: `Could not look up everything this change ships: the checkout does not have the commit ${version}. The change is recorded without the commits it ships.`
      })
    }
  })

  it('as no SHA (a build’s name): HEAD, as before', async () => {
    const { shipped, warning } = await lookUp({ version: '1.4.2', previousVersion: 'v1.0.0' })
    expect(warning).toBeUndefined()
    expect(shipped?.commits.at(-1)?.sha).toBe(sha.hostile)
  })
})

describe('a clone that lacks objects', () => {
  const marker = () => join(root, 'fetched')
  const trap = () => `touch '${marker()}'; false`

  it('never fetches a missing commit: one warning in git’s words, the version’s commit only', async () => {
    const { repo: partial, commits } = partialClone(join(root, 'partial'), env, trap())
    const [first, , last] = commits
    // The trap works: git left to itself fetches the missing commit, running the remote's command.
    expect(() => partial.git(['log', `${first}..${last}`])).toThrow()
    expect(existsSync(marker())).toBe(true)
    rmSync(marker())
    const { shipped, warning } = await lookUp({
      cwd: partial.path,
      version: last,
      previousVersion: first
    })
    expect(existsSync(marker())).toBe(false)
    expect(warning).toMatch(
      /^Could not look up everything this change ships: git merge-base failed: "[^"\n]+"\. The change is recorded without the commits it ships\.$/
    )
    expect(shipped?.commits.map(c => c.sha)).toEqual([last])
    expect(shipped?.changedFiles).toBeUndefined()
    expect(shippedMetadata(shipped)).toMatchObject({ previous_sha: first, commits_complete: false })
  })

  it('leaves no process git started running once its budget is spent', async () => {
    // A unique length of sleep, to find it by; the "#" leaves out the arguments git adds.
    const nap = `sleep 40.${process.pid}`
    const { repo: partial, commits } = partialClone(join(root, 'partial-nap'), env, `${nap} #`)
    try {
      const found = await lookUp({
        cwd: partial.path,
        version: commits[2],
        previousVersion: commits[0],
        budgetMs: 1000
      })
      expect(found.warning).toBeDefined()
      expect(running(nap)).toEqual([])
    } finally {
      for (const pid of running(nap)) process.kill(pid, 'SIGKILL')
    }
  })

  it('reads the paths without renames when rename detection lacks a file’s content', async () => {
    const blobless = new TestRepository(join(root, 'blobless'), env)
    const before = blobless.commit('Add the login', { 'src/login.ts': LOGIN })
    const moved = { 'src/login.ts': null, 'src/auth.ts': `${LOGIN}export const x = 1\n` }
    const after = blobless.commit('Move the login', moved)
    promisor(blobless, trap())
    lose(blobless, blobless.git(['rev-parse', `${before}:src/login.ts`]))
    const { shipped, warning } = await lookUp({
      cwd: blobless.path,
      version: after,
      previousVersion: before
    })
    expect(warning).toBeUndefined()
    expect(shipped).toMatchObject({ commitCount: 1, changedFilesComplete: true })
    expect(shipped?.changedFiles).toEqual([{ path: 'src/auth.ts' }, { path: 'src/login.ts' }])
    expect(existsSync(marker())).toBe(false)
  })

  it('says in git’s words why the paths could not be read, and keeps the commits', async () => {
    const damaged = new TestRepository(join(root, 'damaged'), env)
    const before = damaged.commit('Add the login', { 'src/login.ts': LOGIN })
    const after = damaged.commit('Change the login', { 'src/login.ts': `${LOGIN}x\n` })
    lose(damaged, damaged.git(['rev-parse', `${after}:src`]))
    const { shipped, warning } = await lookUp({
      cwd: damaged.path,
      version: after,
      previousVersion: before
    })
    expect(warning).toMatch(
      /^Could not look up everything this change ships: git diff-tree failed: "fatal: unable to read tree [0-9a-f]{40}"\. The change is recorded with what was found\.$/
    )
    expect(shipped).toMatchObject({ commitCount: 1, changedFilesComplete: false })
    expect(shipped?.changedFiles).toBeUndefined()
  })
})

describe('a shallow clone', () => {
  let shallow: string
  beforeAll(() => {
    shallow = join(root, 'shallow')
    git(root, ['clone', '-q', '--depth', '3', `file://${repo}`, shallow])
  })
  const inShallow = (overrides: Partial<GitLookupOptions>) => lookUp({ cwd: shallow, ...overrides })

  it('that lacks the previous deploy: one warning naming the CI’s setting, and no count', async () => {
    const { shipped, warning } = await inShallow({ previousVersion: sha.initial })
    expect(warning).toBe(
      `Could not look up everything this change ships: the checkout is a shallow clone without the previous deploy ${sha.initial}: set GIT_DEPTH: 0 in the job's variables. The change is recorded without the commits it ships.`
    )
    expect(shipped?.commitCount).toBeUndefined()
    expect(shipped?.commits.map(c => c.sha)).toEqual([sha.hostile])
  })

  it('that lacks the tags before the version’s: the same warning, never a guessed count', async () => {
    const { shipped, warning } = await inShallow({ version: sha.hostile, tag: 'v1.1.0' })
    expect(warning).toContain('shallow clone without the tags before v1.1.0: set GIT_DEPTH: 0')
    expect(shipped?.commitCount).toBeUndefined()
  })

  it('that holds the previous deploy: the whole range, and no warning', async () => {
    const { shipped, warning } = await inShallow({ previousVersion: sha.rename })
    expect(warning).toBeUndefined()
    expect(shipped?.commits.map(c => c.sha)).toEqual([sha.revert, sha.hostile])
    expect(shipped?.commitCount).toBe(2)
  })

  it('is never fetched into', async () => {
    const before = git(shallow, ['rev-list', '--all', '--count'])
    await inShallow({ previousVersion: sha.initial })
    expect(git(shallow, ['rev-list', '--all', '--count'])).toBe(before)
    expect(existsSync(join(shallow, '.git', 'shallow'))).toBe(true)
  })
})

describe('when git cannot read the checkout', () => {
  it('outside any checkout: one warning, nothing shipped but why, without starting git', async () => {
    const folder = join(root, 'home')
    // A git that leaves a mark: outside any checkout it is never started.
    const shim = join(root, 'marking-git')
    mkdirSync(shim, { recursive: true })
    writeFileSync(join(shim, 'git'), `#!/bin/sh\ntouch "${join(shim, 'started')}"\nexit 1\n`)
    chmodSync(join(shim, 'git'), 0o755)
    expect(await lookUp({ cwd: folder, env: { ...env, PATH: shim } })).toEqual({
      shipped: { ...emptyShipped(), pathsUnknown: 'no checkout' },
      warning: `Could not look up everything this change ships: ${folder} is not in a git checkout. The change is recorded without the commits it ships.`
    })
    expect(existsSync(join(shim, 'started'))).toBe(false)
  })

  it('without git: one warning, and nothing shipped', async () => {
    const found = await lookUp({ env: { ...env, PATH: join(root, 'home') } })
    expect(found.shipped).toBeUndefined()
    expect(found.warning).toMatch(
      /^Could not look up everything this change ships: git could not start in .* \(ENOENT: no git program, or no such folder\)\./
    )
  })

  // A checkout another user owns: as root (CI's containers), a clone given to nobody.
  const asRoot = process.getuid?.() === 0 ? it : it.skip
  asRoot(
    'owned by another user: one warning with git’s own fix, and no change to any git configuration',
    async () => {
      const home = readdirSync(join(root, 'home'))
      const theirs = join(root, 'theirs')
      git(root, ['clone', '-q', repo, theirs])
      execFileSync('chown', ['-R', '65534', theirs])
      const found = await lookUp({ cwd: theirs })
      expect(found.shipped).toBeUndefined()
      expect(found.warning).toBe(
        `Could not look up everything this change ships: git refuses the checkout in ${theirs}, which another user owns ("dubious ownership"); if you trust it, run: git config --global --add safe.directory ${theirs}. The change is recorded without the commits it ships.`
      )
      expect(readdirSync(join(root, 'home'))).toEqual(home)
      expect(readFileSync(join(theirs, '.git', 'config'), 'utf8')).not.toContain('safe')
    }
  )
})

describe('the programs a repository’s configuration names', () => {
  let trap: string
  const marker = () => join(root, 'ran')
  beforeAll(() => {
    trap = join(root, 'trap')
    git(root, ['clone', '-q', repo, trap])
    const program = join(root, 'program.sh')
    writeFileSync(program, `#!/bin/sh\ntouch '${marker()}'\nexit 1\n`)
    chmodSync(program, 0o755)
    // A signed commit: `git log` with log.showSignature runs gpg.program to verify it.
    const tree = git(trap, ['rev-parse', 'HEAD^{tree}'])
    const head = git(trap, ['rev-parse', 'HEAD'])
    const signature =
      'gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAAB\n -----END PGP SIGNATURE-----'
    const who = 'Eve <eve@example.com> 1772600000 +0000'
    const object = `tree ${tree}\nparent ${head}\nauthor ${who}\ncommitter ${who}\n${signature}\n\nSigned\n`
    const signed = git(trap, ['hash-object', '-t', 'commit', '-w', '--stdin'], object)
    git(trap, ['update-ref', 'refs/heads/main', signed])
    mkdirSync(join(trap, 'hooks'))
    for (const hook of ['post-checkout', 'pre-commit', 'post-merge', 'reference-transaction'])
      writeFileSync(join(trap, 'hooks', hook), `#!/bin/sh\ntouch '${marker()}'\n`, { mode: 0o755 })
    for (const [name, value] of [
      ['log.showSignature', 'true'],
      ['gpg.program', program],
      ['core.fsmonitor', program],
      ['core.hooksPath', join(trap, 'hooks')],
      ['diff.external', program],
      ['core.pager', program]
    ])
      git(trap, ['config', name, value])
  })

  it('runs none of them: no signature program, fsmonitor, hook, external diff or pager', async () => {
    // The trap works: a plain `git log` runs the signature program.
    git(trap, ['log', '-1'])
    expect(existsSync(marker())).toBe(true)
    rmSync(marker())
    const { shipped, warning } = await lookUp({
      cwd: trap,
      version: 'HEAD',
      previousVersion: 'v1.0.0'
    })
    expect(warning).toBeUndefined()
    expect(shipped?.commitCount).toBe(9)
    expect(existsSync(marker())).toBe(false)
  })

  it('hands git none of the door’s GIT_ variables, which would name a program or another folder', async () => {
    const door = {
      ...env,
      GIT_DIR: join(root, 'home'),
      GIT_EXTERNAL_DIFF: join(root, 'program.sh')
    }
    const hostile = {
      ...door,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'core.pager',
      GIT_CONFIG_VALUE_0: 'x'
    }
    const clean = gitEnvironment(hostile)
    expect(Object.keys(clean).filter(name => name.startsWith('GIT_'))).toEqual([])
    expect(clean['PATH']).toBe(env['PATH'])
    const { shipped } = await lookUp({ env: clean })
    expect(shipped?.commits).toHaveLength(1)
    expect(existsSync(marker())).toBe(false)
  })
})

describe('bounds', () => {
  let long: string
  const LENGTH = MAX_COMMITS_READ + 100
  beforeAll(() => {
    // A history longer than is read, each commit adding a file: made at once by git fast-import.
    long = join(root, 'long')
    const history = new TestRepository(long, env)
    const lines = ['reset refs/heads/main']
    for (let i = 0; i <= LENGTH; i++) {
      const message = `Change ${i} (#${i + 1})`
      lines.push(`commit refs/heads/main`, `mark :${i + 1}`)
      lines.push(`committer CI <ci@example.com> ${1772600000 + i} +0000`)
      lines.push(`data ${Buffer.byteLength(message)}`, message)
      if (i > 0) lines.push(`from :${i}`)
      // In fifty folders: git writes only a small tree for each commit, not one that keeps growing.
      lines.push(`M 644 inline files/d${i % 50}/f${i}.txt`, 'data 2', `${i % 10}`, '')
    }
    history.git(['fast-import', '--quiet'], `${lines.join('\n')}\n`)
  })

  it(`reads the newest ${MAX_COMMITS_READ} commits and every path, and counts them all`, async () => {
    const first = git(long, ['rev-list', '--max-parents=0', 'main'])
    const { shipped, warning } = await lookUp({
      cwd: long,
      version: 'main',
      previousVersion: first
    })
    expect(warning).toBeUndefined()
    expect(shipped?.commitCount).toBe(LENGTH)
    expect(shipped?.commits).toHaveLength(MAX_COMMITS_READ)
    expect(shipped?.commits.at(-1)?.message).toBe(`Change ${LENGTH} (#${LENGTH + 1})`)
    expect(shipped?.pullRequestsComplete).toBe(false)
    // Every path, not the first MAX_COMPARE_FILES in alphabetical order.
    expect(shipped?.changedFiles).toHaveLength(LENGTH)
    expect(MAX_COMPARE_FILES).toBeLessThan(LENGTH)
    expect(shipped?.changedFilesComplete).toBe(true)
  })
})

describe('a commit message of any size', () => {
  let big: string
  let at: Record<string, string>
  /** 2,000 characters with git's newline after them: all that is read of a message, and whole. */
  const FULL_PAGE = `${'Fit the page\n\n'.padEnd(2000, 'y')}\n`
  /** `bytes` in all, made in place: the subject, a blank line, then one letter over and over. */
  function sized(subject: string, bytes: number): Buffer {
    const message = Buffer.alloc(bytes, 'x')
    message.write(`${subject}\n\n`)
    return message
  }
  /** What triage reads of it, as the change command asks: issue keys in auto mode. */
  const triageOf = (shipped: Shipped | undefined) =>
    findTriage(
      {
        settings: { includeCommits: true, triage: { issueKeys: 'auto' } },
        run: {}
      } as unknown as CommandContext,
      shipped
    )
  const longer = (commit: string) =>
    `Could not look up everything this change ships: the message of commit ${commit} (the newest such) is longer than the 2,000 characters read of each: only its start was read. The change is recorded with what was found.`

  beforeAll(() => {
    big = join(root, 'big')
    const history = new TestRepository(big, env)
    const start = history.commit('Start', { 'README.md': '# Big\n' })
    const [hotfix, page, catalogue, banner, padded, dataset] = history.importCommits([
      'HOTFIX: restore the cart\n\nFixes ENG-7\n',
      FULL_PAGE,
      sized('Import the catalogue', 17 * 1024 * 1024),
      'Add a banner (#12)\n',
      // Past its first 2,000 characters, blank lines beyond what is held of a message, then a key.
      `${'Pad'.padEnd(2000, '.')}${'\n'.repeat(10_000)}ENG-9\n`,
      sized('Vendor the dataset (DATA-3)', 17 * 1024 * 1024)
    ])
    at = { start, hotfix, page, catalogue, banner, dataset, padded }
  })
  const lookUpIn = (previousVersion: string, version: string) =>
    lookUp({ cwd: big, previousVersion: at[previousVersion], version: at[version] })

  it('reads messages of up to 2,000 characters whole, and says nothing', async () => {
    const { shipped, warning } = await lookUpIn('start', 'page')
    expect(warning).toBeUndefined()
    expect(shipped?.messages).toEqual([
      'HOTFIX: restore the cart\n\nFixes ENG-7',
      FULL_PAGE.trimEnd()
    ])
    expect(shipped?.messagesComplete).toBeUndefined()
    expect(triageOf(shipped)).toMatchObject({ issues: ['ENG-7'], remediation: { type: 'hotfix' } })
    expect(triageOf(shipped).issuesComplete).toBeUndefined()
  })

  it('reads every commit past a 17 MiB message in the middle of a range: the older hotfix and its key too', async () => {
    const { shipped, warning } = await lookUpIn('start', 'banner')
    expect(warning).toBe(longer(at.catalogue))
    expect(shipped).toMatchObject({
      commitCount: 4,
      pullRequestsComplete: true,
      messagesComplete: false
    })
    expect(shipped?.commits.map(commit => commit.message)).toEqual([
      'HOTFIX: restore the cart',
      'Fit the page',
      'Import the catalogue',
      'Add a banner (#12)'
    ])
    expect(shipped?.messages[2]).toBe(`Import the catalogue\n\n${'x'.repeat(1978)}`)
    const triage = triageOf(shipped)
    expect(triage).toMatchObject({
      issues: ['ENG-7'],
      issuesComplete: false,
      remediation: { type: 'hotfix' }
    })
  })

  it('lists a commit whose message alone passes the log’s bound with the start of its message, and says it was cut', async () => {
    const { shipped, warning } = await lookUpIn('padded', 'dataset')
    expect(warning).toBe(longer(at.dataset))
    expect(shipped?.commits).toEqual([
      {
        sha: at.dataset,
        message: 'Vendor the dataset (DATA-3)',
        author: 'Alice',
        committedAt: expect.any(String)
      }
    ])
    expect(shipped?.messages).toEqual([`Vendor the dataset (DATA-3)\n\n${'x'.repeat(1971)}`])
    expect(shippedMetadata(shipped, triageOf(shipped))).toMatchObject({
      commit_count: 1,
      commits: [{ sha: at.dataset, message: 'Vendor the dataset (DATA-3)' }],
      issues: ['DATA-3'],
      issues_complete: false
    })
  })

  it('says a message was cut when blank lines run past what is held of it, and a key after them', async () => {
    const { shipped, warning } = await lookUpIn('banner', 'padded')
    expect(warning).toBe(longer(at.padded))
    expect(shipped?.messages).toEqual(['Pad'.padEnd(2000, '.')])
    expect(shipped?.messagesComplete).toBe(false)
  })

  it('says so when what is held of git log passes its bound, and keeps the newest commits', async () => {
    // Authors and messages each as long as is held of a field (3 bytes a character read, and 1):
    // 1,500 commits hold more than 16 MiB.
    const held = 3 * MAX_COMMIT_TEXT_READ_CHARS + 1
    const hostile = new TestRepository(join(root, 'hostile-authors'), env)
    const first = hostile.commit('Start', { 'README.md': '# Hostile\n' })
    const added = hostile.importCommits(Array(1500).fill('x'.repeat(held)), 'M'.repeat(held))
    const { shipped, warning } = await lookUp({
      cwd: hostile.path,
      previousVersion: first,
      version: 'main'
    })
    expect(warning).toBe(
      'Could not look up everything this change ships: git log printed more than 16 MiB: the oldest commits were not read. The change is recorded with what was found.'
    )
    expect(shipped?.commitCount).toBe(1500)
    expect(shipped?.commits.length).toBeLessThan(1500)
    expect(shipped?.commits.at(-1)?.sha).toBe(added.at(-1))
    expect(shipped?.pullRequestsComplete).toBe(false)
  })
})

describe('the time budget and a cancel', () => {
  let bin: string
  beforeAll(() => {
    // The real git, slow to start `git log` as on a hung disk; every other command runs at once.
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim()
    bin = join(root, 'slow-bin')
    mkdirSync(bin)
    const script = `#!/bin/sh\ncase " $* " in *" log "*) ${NAP} </dev/null >/dev/null 2>&1 ;; esac\nexec '${real}' "$@"\n`
    writeFileSync(join(bin, 'git'), script, { mode: 0o755 })
  })
  const slow = () => ({ ...env, PATH: `${bin}:${env['PATH']}` })
  /** The slow git's sleep, unique to find it by. */
  const NAP = `sleep 5.${process.pid}`

  it('stops when the budget runs out, and keeps what it found, marked incomplete', async () => {
    const { shipped, warning } = await lookUp({
      env: slow(),
      previousVersion: 'v1.0.0',
      // Long enough for the quick calls before `git log` on a loaded machine, well short of its nap.
      budgetMs: 1500
    })
    expect(warning).toBe(
      "Could not look up everything this change ships: git did not answer within the lookup's time budget of 1.5 s. The change is recorded with what was found."
    )
    expect(shipped).toMatchObject({ previousSha: sha.initial, commitCount: 8, commits: [] })
    expect(shipped?.pullRequestsComplete).toBe(false)
    // Killed with git: nothing it started outlives the budget.
    expect(running(NAP)).toEqual([])
  })

  it('stops at once when the run is cancelled', async () => {
    const cancel = new AbortController()
    const found = lookUp({ env: slow(), previousVersion: 'v1.0.0', signal: cancel.signal })
    setTimeout(() => cancel.abort(), 300)
    expect((await found).warning).toContain('the run was cancelled while git read the history')
    expect(running(NAP)).toEqual([])
  })
})
