/**
 * Triage of what shipped, read from generated git repositories through the checkout's lookup, as
 * an on-call engineer meets it: path order, tags, the remote's host and git's own failures
 * included (the labelled history feeds triage alone, without any of these). Large histories are
 * made at once by git fast-import.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { matcherOf } from '../../src/services/selection.ts'
import type { CommandContext } from '../../src/commands/command.ts'
import { findTriage, serviceShipped, triageRows } from '../../src/commands/triage.ts'
import { lookUpInCheckout, type GitLookupOptions } from '../../src/shipped/git-lookup.ts'
import type { Shipped } from '../../src/shipped/types.ts'
import { labelsWith } from '../../src/triage/labels.ts'
import { riskNames } from '../../src/triage/risk.ts'
import type { Triage } from '../../src/triage/triage.ts'
import { parseServices } from '../../src/services/definition.ts'
import { gitEnv, TestRepository } from '../support/git-repository.ts'
import { lose } from '../shipped/partial-clone.ts'

let root: string
let env: Record<string, string>
const ADVICE = { previousVersion: '--previous-version' }

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'cta-triage-history-')))
  mkdirSync(join(root, 'home'))
  env = gitEnv(join(root, 'home'))
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** A repository of `commits` made by fast-import on main: each a message and the files it adds. */
function generated(name: string, commits: { message: string; files: string[] }[]) {
  const repo = new TestRepository(join(root, name), env)
  const lines: string[] = []
  commits.forEach(({ message, files }, i) => {
    lines.push('commit refs/heads/main', `mark :${i + 1}`)
    lines.push(`committer CI <ci@example.com> ${1772600000 + i} +0000`)
    lines.push(`data ${Buffer.byteLength(message)}`, message)
    if (i > 0) lines.push(`from :${i}`)
    for (const file of files) lines.push(`M 644 inline ${file}`, 'data 2', 'x', '')
  })
  repo.git(['fast-import', '--quiet'], `${lines.join('\n')}\n`)
  return repo
}

async function lookUp(cwd: string, options: Partial<GitLookupOptions> = {}) {
  return lookUpInCheckout({ cwd, env, version: 'main', advice: ADVICE, ...options })
}

/** The command's context as triage reads it: the built-in risk, auto keys, auto labels. */
function context(riskPaths?: string): CommandContext {
  const triage = { issueKeys: 'auto', autoLabels: true, riskPaths: parseServices(riskPaths ?? '') }
  return {
    settings: { includeCommits: true, triage },
    run: { metadata: { key: 'ci', fields: {} }, workspace: root }
  } as unknown as CommandContext
}

/** The labels the change gets from its triage. */
function labels(triage: Triage): string[] {
  const facts = { remediation: triage.remediation?.type, risk: riskNames(triage) }
  return labelsWith([], { ...facts, issues: triage.issues }, true)
}

describe('risk from every changed path', () => {
  let big: TestRepository
  beforeAll(() => {
    // 4,630 paths, as kafka's 2,000 commits change them: the Dockerfile and the Jenkinsfile come
    // late in git's order, and streams/ later still.
    const paths = Array.from({ length: 4627 }, (_, i) => `clients/src/F${i}.java`)
    big = generated('kafka', [
      { message: 'Start', files: ['README.md'] },
      { message: 'Many', files: [...paths, 'docker/jvm/Dockerfile', 'Jenkinsfile'] },
      { message: 'Streams', files: ['streams/src/Topology.java'] }
    ])
  })

  it('finds every category past the 300th path of a 4,630-path deploy, and calls the risk complete', async () => {
    const { shipped, warning } = await lookUp(big.path, { previousVersion: 'main~2' })
    expect(warning).toBeUndefined()
    expect(shipped?.changedFiles).toHaveLength(4630)
    const triage = await findTriage(context(), shipped)
    expect(labels(triage)).toEqual(['risk:infrastructure', 'risk:ci'])
    expect(triage.riskComplete).toBe(true)
    const custom = await findTriage(context('streams: streams/**'), shipped)
    expect(labels(custom)).toEqual(['risk:streams'])
  })

  it('finds a category past the 300th path of a 400-path deploy', async () => {
    const repo = generated('four-hundred', [
      { message: 'Start', files: ['README.md'] },
      { message: 'Lots', files: Array.from({ length: 399 }, (_, i) => `a/${i}.ts`) },
      { message: 'Orders', files: ['db/migrate/001_orders.rb'] }
    ])
    const { shipped } = await lookUp(repo.path, { previousVersion: 'main~2' })
    const triage = await findTriage(context(), shipped)
    expect(shipped?.changedFiles).toHaveLength(400)
    expect(labels(triage)).toEqual(['risk:migration'])
  })

  it('labels no risk when no previous deploy is known, and the summary says why it is unknown', async () => {
    const { shipped } = await lookUp(big.path)
    const triage = await findTriage(context(), shipped)
    expect(labels(triage)).toEqual([])
    expect(triageRows(triage, undefined)).toContainEqual(['Risk: unknown', 'no previous deploy'])
  })

  it('labels nothing when nothing was asked (include-commits false)', async () => {
    const off = { ...context(), settings: { ...context().settings, includeCommits: false } }
    expect(labels(await findTriage(off as CommandContext, undefined))).toEqual([])
  })

  it('on a git failure: one warning in git’s words, and the risk labelled incomplete', async () => {
    const damaged = new TestRepository(join(root, 'damaged'), env)
    const before = damaged.commit('Add the login', { 'src/login.ts': 'a\n' })
    const after = damaged.commit('Add a migration', { 'db/migrate/1.rb': 'b\n' })
    lose(damaged, damaged.git(['rev-parse', `${after}:db`]))
    const { shipped, warning } = await lookUp(damaged.path, { previousVersion: before })
    expect(warning).toMatch(/git diff-tree failed: "fatal: unable to read tree [0-9a-f]{40}"/)
    const triage = await findTriage(context(), shipped)
    expect(triage.riskComplete).toBe(false)
    expect(labels(triage)).toEqual(['risk:incomplete'])
  })
})

describe('every subject of a 2,000-commit range, the newest bodies first', () => {
  let repo: TestRepository
  /** A SHA-shaped name for the commit that the i-th revert reverts. */
  const reverted = (i: number) => i.toString(16).padStart(40, 'c')
  beforeAll(() => {
    const body = 'A long explanation. '.repeat(100)
    const commits = Array.from({ length: 2000 }, (_, i) => {
      const revert = i < 4 || i >= 1996
      const message = revert
        ? `Revert "Change ${i}"\n\nThis reverts commit ${reverted(i)}.\n\n${body}`
        : `ENG-${i + 1}: change ${i}\n\n${body}`
      // In fifty folders: git writes only a small tree for each commit, not one that keeps growing.
      return { message, files: [`src/d${i % 50}/f${i}.ts`] }
    })
    repo = generated('long', [{ message: 'Start', files: ['README.md'] }, ...commits])
  })

  it('finds the reverts at both ends and every key on a subject', async () => {
    const { shipped } = await lookUp(repo.path, { previousVersion: 'main~2000' })
    expect(shipped?.commits).toHaveLength(2000)
    const triage = await findTriage(context(), shipped)
    expect(triage.remediation).toEqual({
      type: 'revert',
      reverts: expect.arrayContaining([
        // The oldest, by their subjects; the newest, by the commits their bodies name.
        ...[0, 1, 2, 3].map(i => `"Change ${i}"`),
        ...[1996, 1997, 1998, 1999].map(reverted)
      ])
    })
    expect(triage.issueCount).toBe(1992)
    expect(triage.issuesComplete).toBe(false)
  })

  it('never counts fewer keys when the range grows', async () => {
    const newer = await lookUp(repo.path, { previousVersion: 'main~1000' })
    const older = await lookUp(repo.path, { previousVersion: 'main~2000' })
    const [some, all] = await Promise.all([newer, older].map(f => findTriage(context(), f.shipped)))
    expect(some.issueCount).toBe(996)
    expect(all.issueCount).toBeGreaterThan(some.issueCount ?? 0)
  })
})

describe('a monorepo deploy', () => {
  it('gives each service the triage of its own paths and commits: docs carry no migration', async () => {
    const mono = new TestRepository(join(root, 'mono'), env)
    const start = mono.commit('Start', { 'README.md': '#\n' })
    mono.commit('ENG-7: Add the orders table', { 'api/db/migrate/1_orders.rb': 'create\n' })
    mono.git(['checkout', '-q', '-b', 'docs'])
    mono.commit('Document the API\n\nCloses #12', { 'docs/api.md': 'api\n' })
    mono.git(['checkout', '-q', 'main'])
    mono.commit('Revert "Faster pages"', { 'web/index.ts': 'x\n' })
    mono.dated(['merge', '-q', '--no-ff', 'docs', '-m', 'Merge branch docs'])
    const { shipped } = await lookUp(mono.path, { previousVersion: start })
    const services = parseServices('api: api/**\nweb: web/**\ndocs: docs/**') ?? []
    const found = await Promise.all(
      services.map(spec =>
        findTriage(context(), serviceShipped(shipped as Shipped, matcherOf(spec)))
      )
    )
    expect(found.map(labels)).toEqual([
      ['risk:migration', 'issue:ENG-7'],
      ['remediation:revert'],
      []
    ])
    // The merge touched docs/ against its first parent: its commits are docs' too.
    expect(found[2]).toMatchObject({ closes: ['#12'], riskComplete: true })
    expect(found[2].issuesComplete).toBeUndefined()
  })
})

describe('on GitLab', () => {
  it('reads #N as an issue and !N as a merge request, with GitLab’s closing words', async () => {
    const lab = new TestRepository(join(root, 'lab'), env)
    const start = lab.commit('Start', { 'README.md': '#\n' })
    lab.commit('Fix the login (#17414)', { 'a.ts': '1\n' })
    lab.commit('Speed up the cart (!88)\n\nImplementing #5, see group/sub/api#9', { 'b.ts': '2\n' })
    lab.commit('Merge into main\n\nTidy\n\nSee merge request acme/shop!90', { 'c.ts': '3\n' })
    lab.git(['remote', 'add', 'origin', 'git@gitlab.com:acme/shop.git'])
    const { shipped } = await lookUp(lab.path, { previousVersion: start })
    const web = 'https://gitlab.com/acme/shop/-/merge_requests/'
    expect(shipped?.pullRequests.map(pull => pull.url)).toEqual([`${web}88`, `${web}90`])
    const triage = await findTriage(context(), shipped)
    expect(triage.closes).toEqual(['#5'])
    expect(triageRows(triage, undefined)).toContainEqual([
      'Closes',
      [{ text: '#5', url: 'https://gitlab.com/acme/shop/-/issues/5' }]
    ])
  })

  it('on GitHub, the same history keeps GitHub’s meaning', async () => {
    const hub = new TestRepository(join(root, 'hub'), env)
    const start = hub.commit('Start', { 'README.md': '#\n' })
    hub.commit('Fix the login (#17414)\n\nImplementing #5, fixes #6', { 'a.ts': '1\n' })
    hub.git(['remote', 'add', 'origin', 'git@github.com:acme/shop.git'])
    const { shipped } = await lookUp(hub.path, { previousVersion: start })
    expect(shipped?.pullRequests.map(pull => pull.url)).toEqual([
      'https://github.com/acme/shop/pull/17414'
    ])
    expect((await findTriage(context(), shipped)).closes).toEqual(['#6'])
  })
})

describe('the smaller ones', () => {
  it('never lets a revert close what it reverts', async () => {
    const repo = new TestRepository(join(root, 'revert'), env)
    const fix = repo.commit('Fixes #22854', { 'a.ts': '1\n' })
    repo.dated(['revert', '--no-edit', fix])
    const { shipped } = await lookUp(repo.path, { previousVersion: fix })
    const triage = await findTriage(context(), shipped)
    expect(triage.closes).toBeUndefined()
    expect(triage.remediation).toEqual({ type: 'revert', reverts: [fix] })
  })

  it('takes a release’s previous release, never its candidate; a candidate’s previous is any tag', async () => {
    const repo = new TestRepository(join(root, 'tags'), env)
    const tag = (name: string) => repo.dated(['tag', '-a', name, '-m', name])
    const release = repo.commit('One', { 'a.ts': '1\n' })
    tag('v4.6.7')
    const rc1 = repo.commit('Two', { 'a.ts': '2\n' })
    tag('v4.6.8-rc1')
    repo.commit('Three', { 'a.ts': '3\n' })
    tag('v4.6.8-rc2')
    repo.commit('Four', { 'a.ts': '4\n' })
    tag('v4.6.8')
    const final = await lookUp(repo.path, { version: 'v4.6.8' })
    expect(final.shipped).toMatchObject({ previousSha: release, commitCount: 3 })
    const candidate = await lookUp(repo.path, { version: 'v4.6.8-rc2' })
    expect(candidate.shipped).toMatchObject({ previousSha: rc1, commitCount: 1 })
  })
})
