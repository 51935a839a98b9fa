/**
 * A small, realistic repository for the fake GitHub API, used by the demo and the benchmark: a
 * push to main of three squash-merged or merged pull requests and a revert since the previous
 * deploy, whose workflow run and production deployment succeeded. It ships an issue key (ENG-142),
 * closes an issue, adds a migration and changes a lockfile: triage has something to find.
 */
import type { GitHubRepository } from './github.ts'

export interface SampleRepository {
  repository: GitHubRepository
  /** The previous deploy's commit. */
  before: string
  /** The pushed commit (GITHUB_SHA). */
  head: string
  /** The current run's id (GITHUB_RUN_ID). */
  runId: string
  /** A push event payload for this push, as GitHub sends it. */
  pushPayload: Record<string, unknown>
}

export function sampleRepository(
  head = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
  runId = '9876543210'
): SampleRepository {
  const before = '9f8e7d6c5b4a39281706f5e4d3c2b1a098765432'
  const shas = [
    '4c1d9e2f7a3b5c6d8e9f0a1b2c3d4e5f6a7b8c9d',
    '7e2f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f',
    '5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80'
  ]
  /** A commit of the release before, which this push reverts. */
  const reverted = '3b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c'
  const mona = { name: 'Mona Octocat', login: 'mona', email: 'mona@example.com' }
  const hubot = { name: 'Hubot', login: 'hubot', email: 'hubot@example.com' }
  const repository: GitHubRepository = {
    fullName: 'octo-org/octo-repo',
    commits: [
      { sha: before, message: 'Release 1.4.0 (#38)', author: mona },
      {
        sha: shas[0],
        message: 'ENG-142 Add sign-in with passkeys (#41)\n\n* Add the passkey flow\n* Tests',
        author: mona,
        files: [
          { filename: 'web/login/passkeys.ts', status: 'added' },
          { filename: 'web/login/index.ts', status: 'modified' },
          { filename: 'db/migrate/20261124_add_passkeys.rb', status: 'added' }
        ]
      },
      {
        sha: shas[1],
        message: 'Merge pull request #42 from octo-org/fix-cart\n\nFix the cart total\n\nFixes #39',
        author: hubot,
        files: [{ filename: 'web/cart/total.ts', status: 'modified' }]
      },
      {
        sha: shas[2],
        message: `Revert "Cache the cart totals"\n\nThis reverts commit ${reverted}.`,
        author: hubot,
        files: [{ filename: 'web/cart/cache.ts', status: 'removed' }]
      },
      {
        sha: head,
        message: 'Speed up checkout (#43)',
        author: { name: 'The Octocat', login: 'octocat' },
        files: [
          { filename: 'web/checkout/index.ts', status: 'modified' },
          { filename: 'package-lock.json', status: 'modified' }
        ]
      }
    ],
    refs: { main: head },
    deployments: [{ id: 501, sha: before, environment: 'production', statuses: ['success'] }],
    releases: [{ tag_name: 'v1.4.0', target_commitish: before }],
    runs: [
      { id: 9876543100, workflow_id: 7, head_branch: 'main', head_sha: before },
      {
        id: Number(runId),
        workflow_id: 7,
        head_branch: 'main',
        head_sha: head,
        status: 'in_progress'
      }
    ],
    pulls: [
      { number: 38, title: 'Release 1.4.0', author: 'mona' },
      { number: 41, title: 'ENG-142 Add sign-in with passkeys', author: 'mona' },
      { number: 42, title: 'Fix the cart total', author: 'hubot' },
      { number: 43, title: 'Speed up checkout', author: 'octocat' }
    ]
  }
  const pushPayload = {
    ref: 'refs/heads/main',
    before,
    after: head,
    compare: `https://github.com/octo-org/octo-repo/compare/${before.slice(0, 12)}...${head.slice(0, 12)}`,
    repository: { full_name: 'octo-org/octo-repo', default_branch: 'main' },
    pusher: { name: 'octocat', email: 'octocat@example.com' },
    commits: repository.commits.slice(1).map(commit => ({
      id: commit.sha,
      message: commit.message,
      author: { name: commit.author.name, username: commit.author.login }
    })),
    head_commit: {
      id: head,
      message: 'Speed up checkout (#43)',
      author: { name: 'The Octocat', username: 'octocat' }
    }
  }
  return { repository, before, head, runId, pushPayload }
}
