/**
 * The triage block of the summary: what an on-call engineer reads first; and triage at a job's
 * end, in process against the emulator and the fake GitHub API: the labels it adds and the
 * issues, risk and remediation in the change's metadata, read from what the lookup read.
 */
import { describe, expect, it } from '@jest/globals'
import { tmpdir } from 'node:os'
import type { Emulator } from '../../emulator/emulator.ts'
import type { GitHubCommit } from '../../emulator/github.ts'
import { readJobEndState } from '../../src/action/post-state.ts'
import { triageRows } from '../../src/commands/triage.ts'
import { run, runPost } from '../../src/main.ts'
import { REPOSITORY, sha, TOKEN, useFakeGitHub } from '../shipped/fake-github.ts'
import { FakeRunner } from '../support/fake-runner.ts'
import { runnerContext } from '../support/run-action.ts'
import { renderSummary } from '../support/summary.ts'
import { useEmulator } from '../support/use-emulator.ts'

const RUN = { serverUrl: 'https://ghes.example.com', repository: 'acme/shop' }
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
    expect(triageRows({ riskComplete: true, remediation }, RUN)).toContainEqual([
      'Remediation',
      text
    ])
  })

  it('links each closed issue on the run’s server, the first 5, and counts the rest', () => {
    const closes = ['#1', 'other/repo#2', '#3', '#4', '#5', '#6']
    const rows = triageRows({ riskComplete: true, closes, closeCount: 60 }, RUN)
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
      RUN
    )
    expect(rows).toEqual(
      expect.arrayContaining([
        ['Risk: migration', 'db/1.sql, db/2.sql'],
        ['Risk: incomplete', 'risk read from 300 changed paths; more changed'],
        ['Issues', 'A-1, A-2, A-3, A-4, A-5 (+1 more)']
      ])
    )
  })
})

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

describe('triage at a job’s end', () => {
  let emulator: Emulator
  useEmulator(started => (emulator = started))
  const github = useFakeGitHub(() => ({ commits: COMMITS }))

  /** The main step, then the post step after a job that ended with `jobStatus`. */
  async function deployJob(inputs: Record<string, string>, jobStatus = 'failure') {
    const all = {
      'api-key': emulator.apiKey,
      'base-url': emulator.url,
      'max-attempts': '1',
      'github-token': TOKEN,
      'include-commits': 'true',
      'previous-version': sha(1),
      'record-at': 'job-end',
      labels: 'team:shop',
      ...inputs
    }
    const env = {
      ...runnerContext(tmpdir()),
      GITHUB_EVENT_NAME: 'push',
      GITHUB_SHA: sha(5),
      GITHUB_API_URL: github().url
    }
    const main = new FakeRunner(all)
    await run(main, env)
    expect(main.failures).toEqual([])
    const post = new FakeRunner({ ...all, 'job-status': jobStatus })
    await runPost(readJobEndState({ STATE_jobEnd: main.states['jobEnd'] }) ?? {}, post, env)
    expect(post.failures).toEqual([])
    return post
  }

  function recorded(): { labels?: string; metadata: Record<string, Record<string, unknown>> } {
    const [change] = emulator.changes.values()
    return { labels: change?.labels, metadata: JSON.parse(String(change?.custom_metadata)) }
  }

  it('labels a failed deploy with its outcome, remediation, risks and issues, and sends them in its metadata', async () => {
    const post = await deployJob({})
    const { labels, metadata } = recorded()
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
    expect(metadata.remediation).toEqual({ type: 'revert', reverts: [sha(1)] })
    // The summary, as GitHub renders it: how it ended, then the triage block first.
    const summary = renderSummary(post.summary)
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
    await deployJob({}, 'success')
    const { metadata } = recorded()
    expect(metadata.github).toMatchObject({ issues: ['OPS-7', 'ENG-142'], issues_complete: false })
    expect(metadata.github).not.toHaveProperty('closes')
  })

  it('adds no label with auto-labels false, still sends the metadata, and records the fix it is told of', async () => {
    await deployJob({ 'auto-labels': 'false', remediates: 'chg_41' }, 'success')
    const { labels, metadata } = recorded()
    expect(labels).toBe('team:shop')
    expect(metadata.remediation).toEqual({ type: 'fix', of: 'chg_41' })
    expect(metadata.github).toMatchObject({ issues: ['OPS-7', 'ENG-142'], risk_complete: true })
  })

  it('takes only the listed projects and the given risk categories', async () => {
    await deployJob({ 'issue-keys': 'eng', 'risk-paths': 'schema: db/**' }, 'success')
    const { labels, metadata } = recorded()
    expect(labels).toBe('team:shop,outcome:success,remediation:revert,risk:schema,issue:ENG-142')
    expect(metadata.github.risk).toEqual({ schema: ['db/migrate/001_orders.rb'] })
  })
})
