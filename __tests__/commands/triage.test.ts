/**
 * The triage block of the summary: what an on-call engineer reads first; and triage as a change
 * records it after a deploy, through no door (the core's steps in process against the emulator),
 * from what the lookup read of the fake GitHub API or of repositories generated in a temporary
 * folder: the labels it adds, and the issues, risk and remediation in the change's metadata.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Emulator } from '../../emulator/emulator.ts'
import type { GitHubCommit } from '../../emulator/github.ts'
import type { RunDefaults } from '../../src/change.ts'
import type { CommandContext } from '../../src/commands/command.ts'
import { findTriage, triageRows } from '../../src/commands/triage.ts'
import type { DeployOutcome } from '../../src/deploy.ts'
import type { LookupSource } from '../../src/shipped/lookup-source.ts'
import { emptyShipped } from '../../src/shipped/types.ts'
import { AFTER_DEPLOY_BUDGET_MS, finishRun, openRun, runCommand } from '../../src/step.ts'
import { riskNames } from '../../src/triage/risk.ts'
import { lookupOptions, REPOSITORY, sha, useFakeGitHub } from '../shipped/fake-github.ts'
import { gitEnv, TestRepository } from '../support/git-repository.ts'
import { Recorder, TEST_WORDS } from '../support/recorder.ts'
import { renderSummary } from '../support/summary.ts'
import { useEmulator } from '../support/use-emulator.ts'

const RUN_LINKS = { serverUrl: 'https://ghes.example.com', repository: 'acme/shop' }
const SHA = '9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c'

describe('triageRows', () => {
  it.each([
    [{ type: 'rollback' as const, of: SHA }, 'rollback of 9f8e7d6'],
    [{ type: 'fix' as const, of: 'chg_41' }, 'fix of chg_41'],
    [{ type: 'revert' as const, reverts: [SHA, '#12'] }, 'revert of 9f8e7d6, #12'],
    [
      { type: 'revert' as const, reverts: ['"Add login (ENG-1)"', 'acme/api#7'] },
      'revert of "Add login (ENG-1)", acme/api#7'
    ],
    [{ type: 'revert' as const, reverts: [] }, 'revert'],
    [{ type: 'hotfix' as const }, 'hotfix']
  ])('says the remediation %j as %s', (remediation, text) => {
    expect(triageRows({ riskComplete: true, remediation }, RUN_LINKS)).toContainEqual([
      'Remediation',
      text
    ])
  })

  it('links each closed issue on the run’s server, the first 5, and counts the rest', () => {
    const closes = ['#1', 'other/repo#2', '#3', '#4', '#5', '#6']
    const rows = triageRows({ riskComplete: true, closes, closeCount: 60 }, RUN_LINKS)
    expect(rows).toContainEqual([
      'Closes',
      [
        { text: '#1', url: 'https://ghes.example.com/acme/shop/issues/1' },
        { text: 'other/repo#2', url: 'https://ghes.example.com/other/repo/issues/2' },
        { text: '#3', url: 'https://ghes.example.com/acme/shop/issues/3' },
        { text: '#4', url: 'https://ghes.example.com/acme/shop/issues/4' },
        { text: '#5', url: 'https://ghes.example.com/acme/shop/issues/5' },
        { text: '+55 more' }
      ]
    ])
  })

  it('gives each risk category its paths, says when the risk is incomplete, and counts the issues beyond 5', () => {
    const issues = ['A-1', 'A-2', 'A-3', 'A-4', 'A-5', 'A-6']
    const rows = triageRows(
      {
        riskComplete: false,
        pathsRead: 300,
        risk: { migration: ['db/1.sql', 'db/2.sql'] },
        issues
      },
      RUN_LINKS
    )
    expect(rows).toEqual(
      expect.arrayContaining([
        ['Risk: migration', 'db/1.sql, db/2.sql'],
        ['Risk: incomplete', 'risk read from 300 changed paths; more changed'],
        ['Issues', 'A-1, A-2, A-3, A-4, A-5 (+1 more)']
      ])
    )
  })

  it('says why the risk is unknown when no changed path could be read, and not that it is incomplete', () => {
    const rows = triageRows({ riskComplete: false, riskUnknown: 'no previous deploy' }, RUN_LINKS)
    expect(rows).toContainEqual(['Risk: unknown', 'no previous deploy'])
    expect(rows).toContainEqual(['Risk: incomplete', undefined])
  })
})

describe('findTriage', () => {
  const context = (includeCommits = true) =>
    ({
      settings: { includeCommits, triage: { issueKeys: 'auto' } },
      run: { metadata: { key: 'ci', fields: {} }, workspace: tmpdir() }
    }) as unknown as CommandContext

  it('gives no risk label, and the lookup’s reason, when no changed path could be read', () => {
    const triage = findTriage(context(), { ...emptyShipped(), pathsUnknown: 'no checkout' })
    expect(triage).toMatchObject({ riskComplete: false, riskUnknown: 'no checkout' })
    expect(triage.pathsRead).toBeUndefined()
    expect(riskNames(triage)).toEqual([])
  })

  it('labels the risk incomplete when a lookup fell short of every path, for a reason of its own', () => {
    const damaged = { ...emptyShipped(), previousSha: SHA, readFrom: 'git' as const }
    const triage = findTriage(context(), damaged)
    expect(triage).toMatchObject({ riskComplete: false, pathsRead: 0 })
    expect(riskNames(triage)).toEqual(['incomplete'])
  })

  it('says nothing of a risk when nothing was asked (include-commits false)', () => {
    const triage = findTriage(context(false), undefined)
    expect(triage).toEqual({ riskComplete: false })
  })
})

let emulator: Emulator
useEmulator(started => {
  emulator = started
})

/** The run as a door gives it: sha(5) of the fake GitHub's repository, on github.com. */
const RUN: RunDefaults = {
  service: REPOSITORY,
  version: sha(5),
  metadata: { key: 'github', fields: { repository: REPOSITORY } },
  links: { serverUrl: 'https://github.com', repository: REPOSITORY },
  workspace: tmpdir()
}

/**
 * The change recorded by the core's steps after a deploy that ended `outcome` 30 s after it
 * started, with `inputs` over the emulator's; what the user reads of it, and what was recorded.
 */
async function recordAfterDeploy(
  inputs: Record<string, string>,
  {
    lookup,
    run = RUN,
    outcome = 'failure'
  }: { lookup: LookupSource; run?: RunDefaults; outcome?: DeployOutcome }
) {
  const recorder = new Recorder()
  const all = {
    'api-key': emulator.apiKey,
    'base-url': emulator.url,
    'max-attempts': '1',
    labels: 'team:shop',
    ...inputs
  }
  const open = await openRun({ renderer: recorder, inputs: all, words: TEST_WORDS })
  const finishedAt = Date.now()
  const deploy = { outcome, status: outcome, startedAt: finishedAt - 30_000, finishedAt }
  const plan = { run, budgetCap: AFTER_DEPLOY_BUDGET_MS, lookup, deploy }
  await finishRun(open, await runCommand(open, plan), 'recording')
  expect(recorder.failures).toEqual([])
  const [change] = emulator.changes.values()
  const metadata = JSON.parse(String(change?.custom_metadata))
  return { recorder, labels: change?.labels, metadata }
}

const ALICE = { name: 'Alice', login: 'alice' }
const COMMITS: GitHubCommit[] = [
  { sha: sha(1), message: 'Add a cache', files: [{ filename: 'src/cache.ts' }] },
  {
    sha: sha(2),
    message: 'Add the orders table (ENG-142)\n\nFixes #88',
    files: [{ filename: 'db/migrate/001_orders.rb' }]
  },
  {
    sha: sha(3),
    message: `Revert "Add a cache"\n\nThis reverts commit ${sha(1)}.`,
    files: [{ filename: 'src/cache.ts', status: 'removed' }]
  },
  { sha: sha(4), message: 'OPS-7 Bump express (#41)', files: [{ filename: 'package-lock.json' }] },
  { sha: sha(5), message: 'Deploy on tags', files: [{ filename: '.github/workflows/deploy.yml' }] }
].map(commit => ({ author: ALICE, ...commit }) as GitHubCommit)

describe('triage after a deploy, read from GitHub', () => {
  const github = useFakeGitHub(() => ({ commits: COMMITS }))
  /** GitHub's lookup as the action's door describes it, from the previous version given. */
  const fromGitHub = (previousVersion = sha(1)): LookupSource => ({
    from: 'github',
    options: lookupOptions(github(), { previousVersion })
  })

  it('labels a failed deploy with its outcome, remediation, risks and issues, and sends them in its metadata', async () => {
    const { recorder, labels, metadata } = await recordAfterDeploy({}, { lookup: fromGitHub() })
    expect(labels).toBe(
      'team:shop,outcome:failure,remediation:revert,risk:migration,risk:dependencies,risk:ci,issue:OPS-7,issue:ENG-142'
    )
    expect(metadata.github).toMatchObject({
      issues: ['OPS-7', 'ENG-142'],
      closes: ['#88'],
      risk: {
        migration: ['db/migrate/001_orders.rb'],
        dependencies: ['package-lock.json'],
        ci: ['.github/workflows/deploy.yml']
      },
      risk_complete: true
    })
    expect(metadata.github).not.toHaveProperty('issues_complete')
    expect(metadata.github).not.toHaveProperty('risk_unknown')
    expect(metadata.remediation).toEqual({ type: 'revert', reverts: [sha(1)] })
    // The summary, as GitHub renders it: how it ended, then the triage block first.
    const summary = renderSummary(recorder.summary)
    expect(summary.title).toMatch(/^Deploy failed after \d+ s: change recorded$/)
    expect(summary.blocks[0]).toBe('Triage')
    const rows = summary.cells.join('\n')
    expect(rows).toContain(`Remediation\nrevert of ${sha(1).slice(0, 7)}`)
    expect(rows).toContain('Risk: migration\ndb/migrate/001_orders.rb')
    expect(rows).toContain('Issues\nOPS-7, ENG-142')
    expect(summary.links).toContainEqual({
      text: '#88',
      href: `https://github.com/${REPOSITORY}/issues/88`
    })
    expect(summary.cells.filter(cell => cell.length > 200)).toEqual([])
    // Read from what the lookup read: the compare alone.
    expect(github().requests.map(request => request.path)).toEqual([
      `/repos/${REPOSITORY}/compare/${sha(1)}...${sha(5)}?per_page=250&page=1`
    ])
  })

  it('says the issues are a part when a shipped message runs past the 2,000 characters read of it', async () => {
    const long = `Add the orders table (ENG-142)\n\n${'x'.repeat(2000)}\n\nFixes #99`
    const commits = COMMITS.map(commit =>
      commit.sha === sha(2) ? { ...commit, message: long } : commit
    )
    github().repository = { fullName: REPOSITORY, commits }
    const { metadata } = await recordAfterDeploy({}, { lookup: fromGitHub(), outcome: 'success' })
    expect(metadata.github).toMatchObject({ issues: ['OPS-7', 'ENG-142'], issues_complete: false })
    expect(metadata.github).not.toHaveProperty('closes')
  })

  it('adds no label with auto-labels false, still sends the metadata, and records the fix it is told of', async () => {
    const inputs = { 'auto-labels': 'false', remediates: 'chg_41' }
    const { labels, metadata } = await recordAfterDeploy(inputs, {
      lookup: fromGitHub(),
      outcome: 'success'
    })
    expect(labels).toBe('team:shop')
    expect(metadata.remediation).toEqual({ type: 'fix', of: 'chg_41' })
    expect(metadata.github).toMatchObject({ issues: ['OPS-7', 'ENG-142'], risk_complete: true })
  })

  it('takes only the listed projects and the given risk categories', async () => {
    const inputs = { 'issue-keys': 'eng', 'risk-paths': 'schema: db/**' }
    const { labels, metadata } = await recordAfterDeploy(inputs, {
      lookup: fromGitHub(),
      outcome: 'success'
    })
    expect(labels).toBe('team:shop,outcome:success,remediation:revert,risk:schema,issue:ENG-142')
    expect(metadata.github.risk).toEqual({ schema: ['db/migrate/001_orders.rb'] })
  })

  it('says the risk of a rollback is unknown, with no risk label: GitHub’s compare lists none of its paths', async () => {
    const run = { ...RUN, version: sha(2) }
    const { labels, metadata } = await recordAfterDeploy(
      {},
      { lookup: fromGitHub(sha(5)), run, outcome: 'success' }
    )
    expect(labels).toBe('team:shop,outcome:success,remediation:rollback')
    expect(metadata.github).toMatchObject({
      rollback: true,
      risk_complete: false,
      risk_unknown: 'rollback paths not listed'
    })
  })
})

describe('triage after a deploy, read from a generated repository', () => {
  let root: string
  let env: Record<string, string>
  let shop: TestRepository
  const at: Record<string, string> = {}
  const MIGRATION = 'db/migrate/1_orders.rb'
  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'cta-triage-')))
    mkdirSync(join(root, 'home'))
    env = gitEnv(join(root, 'home'))
    shop = new TestRepository(join(root, 'shop'), env)
    at.start = shop.commit('Start', { 'README.md': '# Shop\n' })
    at.orders = shop.commit('Add the orders table', { [MIGRATION]: 'create_table :orders\n' })
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  /** The checkout's lookup, as the command line's door describes it, at `cwd`. */
  const fromCheckout = (cwd: string, previousVersion?: string): LookupSource => ({
    from: 'git',
    options: { cwd, env, previousVersion, advice: { previousVersion: '<previous-version>' } }
  })
  const deployOf = (version: string): RunDefaults => ({
    service: 'acme/shop',
    version,
    metadata: { key: 'ci', fields: {}, shippedKey: 'git' },
    workspace: root
  })
  /** The change recorded after a successful deploy of `version`, what shipped read from `lookup`. */
  const recorded = (version: string, lookup: LookupSource, inputs = {}) =>
    recordAfterDeploy(inputs, { lookup, run: deployOf(version), outcome: 'success' })

  it('gives a first deploy no risk label: with no previous deploy, no path can be read', async () => {
    const { labels, metadata } = await recorded(at.orders, fromCheckout(shop.path))
    expect(labels).toBe('team:shop,outcome:success')
    expect(metadata.git).toMatchObject({ risk_complete: false, risk_unknown: 'no previous deploy' })
    expect(metadata.git).not.toHaveProperty('risk')
  })

  it('gives a version that is no commit of the checkout no risk label, and says so', async () => {
    const missing = 'feedface'.repeat(5)
    const { labels, metadata, recorder } = await recorded(
      missing,
      fromCheckout(shop.path, at.start)
    )
    expect(recorder.warnings).toEqual([
      `Could not look up everything this change ships: the checkout does not have the commit ${missing}. The change is recorded without the commits it ships.`
    ])
    expect(labels).toBe('team:shop,outcome:success')
    expect(metadata.git).toMatchObject({ risk_unknown: 'version is not a commit' })
  })

  it('gives a run outside a checkout no risk label, and says so', async () => {
    const { labels, metadata } = await recorded(at.orders, fromCheckout(join(root, 'home')))
    expect(labels).toBe('team:shop,outcome:success')
    expect(metadata.git).toMatchObject({ risk_complete: false, risk_unknown: 'no checkout' })
  })

  it('reads the risk of a rollback from the paths it takes back: undoing a migration is a migration', async () => {
    const { labels, metadata } = await recorded(at.start, fromCheckout(shop.path, at.orders))
    expect(labels).toBe('team:shop,outcome:success,remediation:rollback,risk:migration')
    expect(metadata.git).toMatchObject({
      rollback: true,
      risk: { migration: [MIGRATION] },
      risk_complete: true
    })
    expect(metadata.git).not.toHaveProperty('risk_unknown')
  })

  it('labels the risk incomplete when the list of changed paths is cut at its bound', async () => {
    // More than the 4 MiB of paths read: 17,000 names of 250 characters, after a migration;
    // matched against one quick category, well within the matching's time bound.
    const big = new TestRepository(join(root, 'big'), env)
    const start = big.commit('Start', { 'README.md': '# Big\n' })
    const names = Array.from({ length: 17_000 }, (_, i) => `x/${String(i).padStart(246, '0')}`)
    const added = [MIGRATION, ...names].map(path => `M 644 :1 ${path}`)
    const stream = [
      'blob',
      'mark :1',
      'data 2',
      'x',
      'commit refs/heads/main',
      'committer CI <ci@example.com> 1772600000 +0000',
      'data 4',
      'Many',
      `from ${start}`,
      ...added
    ]
    big.git(['fast-import', '--quiet'], `${stream.join('\n')}\n`)
    const { labels, metadata } = await recorded('main', fromCheckout(big.path, start), {
      'risk-paths': 'schema: db/**'
    })
    expect(labels).toBe('team:shop,outcome:success,risk:schema,risk:incomplete')
    expect(metadata.git).toMatchObject({ risk: { schema: [MIGRATION] }, risk_complete: false })
    expect(metadata.git).not.toHaveProperty('risk_unknown')
  })
})
