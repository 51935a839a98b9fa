/** What a change ships, as the change command reports it: outputs, the log line, the summary. */
import { describe, expect, it } from '@jest/globals'
import {
  findShipped,
  logShipped,
  outputShipped,
  summarizeShipped
} from '../../src/commands/shipped.ts'
import type { CommandContext } from '../../src/commands/command.ts'
import { Redactor } from '../../src/redact.ts'
import { Report } from '../../src/report.ts'
import { emptyShipped, type Shipped } from '../../src/shipped/types.ts'
import { FakeRunner } from '../support/fake-runner.ts'
import { renderSummary } from '../support/summary.ts'
import { ACTION_WORDS } from '../../src/main.ts'

const sha = (n: number): string => n.toString(16).padStart(40, '0')
const PREVIOUS = 'a'.repeat(40)
const RUN = { serverUrl: 'https://github.example', repository: 'o/r' }

function shipped(commits: number, overrides: Partial<Shipped> = {}): Shipped {
  return {
    ...emptyShipped(),
    previousSha: PREVIOUS,
    source: 'workflow-run',
    compareUrl: 'https://github.com/o/r/compare/a...b',
    commitCount: commits,
    commits: Array.from({ length: commits }, (_, i) => ({
      sha: sha(i + 1),
      message: `Change ${i + 1} (#${i + 1})`
    })),
    messages: [],
    pullRequests: [
      { number: commits, title: 'The last', url: `https://github.com/o/r/pull/${commits}` }
    ],
    pullRequestCount: commits,
    pullRequestsComplete: true,
    apiCalls: 3,
    ...overrides
  }
}

async function reported(act: (report: Report) => void, dryRun = false): Promise<FakeRunner> {
  const runner = new FakeRunner()
  const report = new Report(runner, new Redactor(), ACTION_WORDS, dryRun)
  act(report)
  await report.finish({ policy: 'auto', jobSummary: true })
  return runner
}

describe('findShipped', () => {
  it('makes no lookup when include-commits is false, or nothing names the repository', async () => {
    const context = (includeCommits: boolean, repository?: string) =>
      ({ settings: { includeCommits }, run: { repository } }) as unknown as CommandContext
    expect(await findShipped(context(false, 'o/r'), { version: sha(9) })).toBeUndefined()
    expect(await findShipped(context(true, undefined), { version: sha(9) })).toBeUndefined()
    expect(await findShipped(context(true, 'o/r'), {})).toBeUndefined()
  })
})

describe('outputShipped', () => {
  it('sets the four outputs from what shipped, and empty ones when nothing was looked up', async () => {
    const found = await reported(report => outputShipped(report, shipped(4, { rollback: true })))
    expect(found.outputs).toMatchObject({
      'previous-version': PREVIOUS,
      'commit-count': '4',
      'compare-url': 'https://github.com/o/r/compare/a...b',
      rollback: 'true'
    })
    const none = await reported(report => outputShipped(report, undefined))
    expect(none.outputs).toMatchObject({
      'previous-version': '',
      'commit-count': '',
      rollback: 'false'
    })
  })

  it('still sets them in a dry run: they come from reads, not from the service', async () => {
    const dry = await reported(report => outputShipped(report, shipped(4)), true)
    expect(dry.outputs['commit-count']).toBe('4')
  })
})

describe('logShipped', () => {
  it('says in one line what was found, and "at least" for a count it does not know', async () => {
    const runner = await reported(report =>
      logShipped(report, shipped(4, { pullRequestsComplete: false }))
    )
    expect(runner.lines[0]).toBe(
      `What the change ships: previous deploy ${PREVIOUS} (from workflow-run), 4 commits, at least 4 pull requests, https://github.com/o/r/compare/a...b, 3 GitHub API calls.`
    )
  })
})

describe('summarizeShipped', () => {
  it('lists the newest 50 commits, with their pull requests linked, and says of how many', async () => {
    const runner = await reported(report => summarizeShipped(report, shipped(600), RUN))
    expect(runner.summary).toContain('Commits \\(the newest 50 of 600\\)')
    expect(runner.summary).toContain('[\\#600 The last](https://github.com/o/r/pull/600)')
    expect(runner.summary).toContain('Change 551 ')
    expect(runner.summary).not.toContain('Change 550 ')
    const partial = await reported(report =>
      summarizeShipped(report, shipped(600, { pullRequestsComplete: false }), RUN)
    )
    expect(partial.summary).toContain('Commits \\(the newest 50 read of 600\\)')
  })

  it("links each short SHA to its commit page on the run's server", async () => {
    const runner = await reported(report => summarizeShipped(report, shipped(2), RUN))
    const { links } = renderSummary(runner.summary)
    expect(links).toContainEqual({
      text: sha(2).slice(0, 7),
      href: `https://github.example/o/r/commit/${sha(2)}`
    })
  })
})
