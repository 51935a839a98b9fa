/**
 * What a change ships, as the change command reports it, through no door: the lookup it asks for
 * and why no changed path could be read, the files it hands the risk and the services, the
 * outputs, the log line and the summary's table.
 */
import { describe, expect, it } from '@jest/globals'
import type { RunDefaults } from '../../src/change.ts'
import {
  changedFiles,
  findShipped,
  logShipped,
  shippedOutputs,
  shippedSections
} from '../../src/commands/shipped.ts'
import type { CommandContext } from '../../src/commands/command.ts'
import { Redactor } from '../../src/redact.ts'
import { Report, type CommandResult } from '../../src/report.ts'
import type { LookupSource } from '../../src/shipped/lookup-source.ts'
import { emptyShipped, type Shipped } from '../../src/shipped/types.ts'
import { Recorder, TEST_WORDS } from '../support/recorder.ts'
import { renderSummary } from '../support/summary.ts'

const sha = (n: number): string => n.toString(16).padStart(40, '0')
const PREVIOUS = 'a'.repeat(40)
const LINKS: RunDefaults['links'] = { serverUrl: 'https://github.example', repository: 'o/r' }

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

/** A report over a Recorder, in no door's words. */
function recorded(dryRun = false): { report: Report; recorder: Recorder } {
  const recorder = new Recorder()
  return { report: new Report(recorder, new Redactor(), TEST_WORDS, dryRun), recorder }
}

/** What a user reads of a result's outputs and sections: the recorder they were written to. */
async function reported(
  { outputs = {}, sections = [] }: Partial<CommandResult>,
  dryRun = false
): Promise<Recorder> {
  const { report, recorder } = recorded(dryRun)
  await report.finish(
    { result: { title: {}, sections, outputs } },
    { moment: 'recording', policy: 'auto', jobSummary: true }
  )
  return recorder
}

/** The context findShipped reads: include-commits, where to look, and the report. */
function context(includeCommits: boolean, lookup?: LookupSource): CommandContext {
  const settings = { includeCommits }
  return { settings, lookup, report: recorded().report } as unknown as CommandContext
}

/** GitHub's lookup as the action's door describes it, without a token: it makes no call. */
const WITHOUT_TOKEN: LookupSource = {
  from: 'github',
  options: {
    token: '',
    apiUrl: 'https://api.github.invalid',
    serverUrl: 'https://github.com',
    repository: 'o/r',
    eventName: 'workflow_dispatch',
    payload: {},
    advice: { tokenInput: '<github-token>' }
  }
}

describe('findShipped', () => {
  it('makes no lookup when include-commits is false, or there is nowhere to look, or no version', async () => {
    expect(await findShipped(context(false, WITHOUT_TOKEN), { version: sha(9) })).toBeUndefined()
    expect(await findShipped(context(true), { version: sha(9) })).toBeUndefined()
    expect(await findShipped(context(true, WITHOUT_TOKEN), {})).toBeUndefined()
  })

  it('says no changed path can be read without a token, whatever else GitHub’s lookup knows', async () => {
    const found = await findShipped(context(true, WITHOUT_TOKEN), { version: sha(9) })
    expect(found?.pathsUnknown).toBe('no token')
    const given = { ...WITHOUT_TOKEN.options, previousVersion: PREVIOUS }
    const withPrevious = await findShipped(context(true, { from: 'github', options: given }), {
      version: sha(9)
    })
    expect(withPrevious).toMatchObject({ previousSha: PREVIOUS, pathsUnknown: 'no token' })
  })

  it('reads a push payload’s files without a token: they are paths read', async () => {
    const payload = {
      before: PREVIOUS,
      after: sha(9),
      commits: [
        { id: sha(9), message: 'Add it', added: ['db/migrate/1.rb'], modified: [], removed: [] }
      ]
    }
    const options = { ...WITHOUT_TOKEN.options, eventName: 'push', payload }
    const found = await findShipped(context(true, { from: 'github', options }), {
      version: sha(9)
    })
    expect(found?.changedFiles).toEqual([{ path: 'db/migrate/1.rb' }])
    expect(found?.pathsUnknown).toBeUndefined()
  })
})

describe('changedFiles', () => {
  it('gives no files, with the lookup’s reason, when no changed path could be read', () => {
    const first = { ...emptyShipped(), pathsUnknown: 'no previous deploy' as const }
    expect(changedFiles(true, first)).toEqual({ complete: false, reason: 'no previous deploy' })
    expect(changedFiles(false, first)).toEqual({
      complete: false,
      reason: 'include-commits is false'
    })
  })

  it('gives a rollback’s paths, those it takes back, as any deploy’s', () => {
    const files = [{ path: 'db/migrate/1_orders.rb' }]
    const rollback = shipped(0, { rollback: true, readFrom: 'git', changedFiles: files })
    expect(changedFiles(true, { ...rollback, changedFilesComplete: true })).toEqual({
      files,
      complete: true
    })
  })

  it('says why a list read is not whole: the checkout’s bounds, GitHub’s 300 files, or GitLab’s', () => {
    const cut = shipped(1, { changedFiles: [{ path: 'a' }], changedFilesComplete: false })
    expect(changedFiles(true, { ...cut, readFrom: 'git' }).reason).toBe(
      'the lookup read the paths within its bounds'
    )
    expect(changedFiles(true, cut).reason).toBe("GitHub's compare lists at most 300 files")
    const gitlab = { kind: 'gitlab' as const, web: 'https://gitlab.example.com/acme/shop' }
    expect(changedFiles(true, { ...cut, forge: gitlab }).reason).toBe(
      "GitLab's compare lists the files within its bounds"
    )
  })
})

describe('shippedOutputs', () => {
  it('sets the four outputs from what shipped, and empty ones when nothing was looked up', async () => {
    expect(shippedOutputs(shipped(4, { rollback: true }))).toEqual({
      'previous-version': PREVIOUS,
      'commit-count': '4',
      'compare-url': 'https://github.com/o/r/compare/a...b',
      rollback: 'true'
    })
    expect(shippedOutputs(undefined)).toEqual({
      'previous-version': '',
      'commit-count': '',
      'compare-url': '',
      rollback: 'false'
    })
  })

  it('still sets them in a dry run: they come from reads, not from the service', async () => {
    const dry = await reported({ outputs: shippedOutputs(shipped(4)) }, true)
    expect(dry.outputs['commit-count']).toBe('4')
  })
})

describe('logShipped', () => {
  it('says in one line what was found, and "at least" for a count it does not know', () => {
    const { report, recorder } = recorded()
    logShipped(report, shipped(4, { pullRequestsComplete: false }))
    expect(recorder.lines[0]).toBe(
      `What the change ships: previous deploy ${PREVIOUS} (from workflow-run), 4 commits, at least 4 pull requests, https://github.com/o/r/compare/a...b, 3 GitHub API calls.`
    )
  })

  it('says merge requests for a GitLab checkout', () => {
    const { report, recorder } = recorded()
    const gitlab = { kind: 'gitlab' as const, web: 'https://gitlab.example.com/acme/shop' }
    logShipped(report, shipped(2, { forge: gitlab, readFrom: 'git' }))
    expect(recorder.lines[0]).toMatch(/2 commits, 2 merge requests, .*read from the checkout\.$/)
  })

  it('names the forge whose API it asked', () => {
    const { report, recorder } = recorded()
    const gitlab = { kind: 'gitlab' as const, web: 'https://gitlab.example.com/acme/shop' }
    logShipped(report, shipped(2, { forge: gitlab, apiCalls: 1 }))
    expect(recorder.lines[0]).toMatch(/, 1 GitLab API call\.$/)
  })
})

describe('shippedSections', () => {
  it('lists the newest 50 commits, with their pull requests linked, and says of how many', async () => {
    const all = await reported({ sections: shippedSections(shipped(600), LINKS) })
    expect(all.summary).toContain('Commits \\(the newest 50 of 600\\)')
    expect(all.summary).toContain('[\\#600 The last](https://github.com/o/r/pull/600)')
    expect(all.summary).toContain('Change 551 ')
    expect(all.summary).not.toContain('Change 550 ')
    const partial = shipped(600, { pullRequestsComplete: false })
    const read = await reported({ sections: shippedSections(partial, LINKS) })
    expect(read.summary).toContain('Commits \\(the newest 50 read of 600\\)')
  })

  it("links each short SHA to its commit page on the run's server", async () => {
    const recorder = await reported({ sections: shippedSections(shipped(2), LINKS) })
    expect(renderSummary(recorder.summary).links).toContainEqual({
      text: sha(2).slice(0, 7),
      href: `https://github.example/o/r/commit/${sha(2)}`
    })
  })

  it('adds no section when no commit was read', () => {
    expect(shippedSections(undefined, LINKS)).toEqual([])
    expect(shippedSections(shipped(0), LINKS)).toEqual([])
  })
})
