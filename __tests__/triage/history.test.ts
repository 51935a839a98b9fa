/**
 * The triage against a labelled history: deploys written in the style of real projects (Java with
 * Gradle, Rails, Go with Kubernetes, Node, Python with Django), each with its commits (subjects and
 * bodies), the files they change, the labels it must give and the near misses it must not give.
 * Precision and recall per kind are printed, and each is held to its goal.
 */
import { describe, expect, it } from '@jest/globals'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { selectServices } from '../../src/services/selection.ts'
import { parseIssueKeyMode } from '../../src/triage/issue-keys.ts'
import { BUILT_IN_RISK, riskOf } from '../../src/triage/risk.ts'
import { triage } from '../../src/triage/triage.ts'

interface Deploy {
  name: string
  /** The pushed branch or the pull request's head branch. */
  branch?: string
  /** The `issue-keys` input; auto when absent. */
  issueKeys?: string
  pullRequests?: { number: number; title?: string }[]
  /** Oldest first. */
  commits: { message: string; files?: string[] }[]
  /** Every label the deploy must give: `risk:NAME`, `issue:KEY`, `closes:REF`, `remediation:TYPE`. */
  labels: string[]
  /** Near misses: labels it must not give. */
  not?: string[]
}

interface History {
  repository: string
  deploys: Deploy[]
}

const FOLDER = '__tests__/fixtures/history'
const histories: History[] = readdirSync(FOLDER)
  .filter(name => name.endsWith('.yaml'))
  .sort()
  .map(name => parse(readFileSync(join(FOLDER, name), 'utf8')) as History)
const deploys = histories.flatMap(({ repository, deploys }) =>
  deploys.map(deploy => ({ repository, ...deploy }))
)

const RISK_KINDS = BUILT_IN_RISK.map(({ name }) => `risk:${name}`)
/** The goals each kind is held to: a precision, and a recall where one is asked. */
const GOALS: Record<string, { precision: number; recall?: number }> = {
  'issue keys': { precision: 0.97, recall: 0.95 },
  'closing references': { precision: 0.97 },
  remediation: { precision: 0.95, recall: 0.8 },
  ...Object.fromEntries(RISK_KINDS.map(kind => [kind, { precision: 0.9, recall: 0.85 }]))
}

function kindOf(label: string): string | undefined {
  if (label.startsWith('issue:')) return 'issue keys'
  if (label.startsWith('closes:')) return 'closing references'
  if (label.startsWith('remediation:')) return 'remediation'
  return RISK_KINDS.includes(label) ? label : undefined
}

/** The labels the triage gives a deploy, every issue key and closed issue included. */
function labelsGiven(deploy: Deploy & { repository: string }): string[] {
  const paths = new Set(deploy.commits.flatMap(commit => commit.files ?? []))
  const changed = { files: [...paths].map(path => ({ path })), complete: true }
  const found = triage(
    {
      messages: deploy.commits.map(commit => commit.message),
      pullRequests: deploy.pullRequests ?? [],
      branch: deploy.branch,
      issueKeys: parseIssueKeyMode(deploy.issueKeys ?? 'auto') ?? 'none',
      repository: deploy.repository,
      serverUrl: 'https://github.com',
      everyCommitRead: true
    },
    riskOf(changed, selectServices(BUILT_IN_RISK, changed))
  )
  return [
    ...Object.keys(found.risk ?? {}).map(name => `risk:${name}`),
    ...(found.issues ?? []).map(key => `issue:${key}`),
    ...(found.closes ?? []).map(ref => `closes:${ref}`),
    ...(found.remediation ? [`remediation:${found.remediation.type}`] : [])
  ]
}

interface Score {
  truePositives: number
  given: number
  expected: number
}

/** Per kind: how many labels were given, expected, and both; and each deploy's errors. */
function score(): { scores: Map<string, Score>; errors: string[] } {
  const scores = new Map(
    Object.keys(GOALS).map(kind => [kind, { truePositives: 0, given: 0, expected: 0 }])
  )
  const errors: string[] = []
  for (const deploy of deploys) {
    const given = labelsGiven(deploy)
    for (const label of given) {
      const kindScore = scores.get(kindOf(label) ?? '')
      if (kindScore === undefined) continue
      kindScore.given++
      if (deploy.labels.includes(label)) kindScore.truePositives++
      else errors.push(`false   ${label}  (${deploy.name})`)
    }
    for (const label of deploy.labels) {
      const kindScore = scores.get(kindOf(label) ?? '')
      if (kindScore !== undefined) kindScore.expected++
      if (!given.includes(label)) errors.push(`missed  ${label}  (${deploy.name})`)
    }
  }
  return { scores, errors }
}

/** Nothing given claims nothing wrong: a precision of 1. */
const precision = ({ truePositives, given }: Score): number =>
  given === 0 ? 1 : truePositives / given
const recall = ({ truePositives, expected }: Score): number =>
  expected === 0 ? 1 : truePositives / expected

describe('the labelled history', () => {
  it('holds at least 60 deploys from five kinds of project, each label of a known kind', () => {
    expect(histories).toHaveLength(5)
    expect(deploys.length).toBeGreaterThanOrEqual(60)
    for (const deploy of deploys) {
      const labels = [...deploy.labels, ...(deploy.not ?? [])]
      expect([deploy.name, labels.filter(label => kindOf(label) === undefined)]).toEqual([
        deploy.name,
        []
      ])
      const both = deploy.labels.filter(label => deploy.not?.includes(label))
      expect([deploy.name, both]).toEqual([deploy.name, []])
    }
  })

  it('gives each kind of label at its goals of precision and recall', () => {
    const { scores, errors } = score()
    const rows = [...scores].map(([kind, s]) => {
      const cells = [kind, precision(s).toFixed(3), recall(s).toFixed(3), s.given, s.expected]
      return `| ${cells.join(' | ')} |`
    })
    console.log(
      [
        `Triage on ${deploys.length} labelled deploys:`,
        '| kind | precision | recall | given | expected |',
        '| --- | --- | --- | --- | --- |',
        ...rows,
        '',
        ...errors
      ].join('\n')
    )
    for (const [kind, goal] of Object.entries(GOALS)) {
      const s = scores.get(kind) as Score
      expect(s.expected).toBeGreaterThan(0)
      expect([kind, 'precision', precision(s) >= goal.precision]).toEqual([kind, 'precision', true])
      if (goal.recall !== undefined) {
        expect([kind, 'recall', recall(s) >= goal.recall]).toEqual([kind, 'recall', true])
      }
    }
  })
})
