/**
 * With no token, or when the API fails, a push event's payload still says what the push brought:
 * `before`, its `commits` and the files they touched. Its shape is checked as it is read.
 */
import { isFullSha, readCommits, type Range } from './compare.ts'

/** GitHub puts at most this many commits in a push payload; a list this long may be cut. */
export const MAX_PUSH_PAYLOAD_COMMITS = 2048

/** A push payload's commit as far as it is read: any field may be missing or of another type. */
type PushCommit = { [field: string]: unknown; author?: Record<string, unknown> | null } | null

/** What a push payload says, when its `after` is the version and its `before` a real commit. */
export function shippedFromPushPayload(
  eventName: string,
  payload: unknown,
  version: string
): (Range & { previousSha: string }) | undefined {
  const push = payload as { before?: unknown; after?: unknown; commits?: unknown } | null
  const { before, after } = push ?? {}
  // An all-zero `before` is a new branch.
  if (eventName !== 'push' || !isFullSha(before) || /^0+$/.test(before)) return undefined
  if (!isFullSha(after) || after.toLowerCase() !== version.toLowerCase()) return undefined
  const items: PushCommit[] = Array.isArray(push?.commits) ? push.commits : []
  const lists = items.flatMap(item => [item?.added, item?.modified, item?.removed])
  const everyCommitListsFiles = lists.every(Array.isArray)
  const names = lists.flat().filter((name): name is string => typeof name === 'string' && !!name)
  const complete = items.length < MAX_PUSH_PAYLOAD_COMMITS
  const commits = items.map(item => ({
    sha: item?.id,
    message: item?.message,
    authors: [item?.author?.username, item?.author?.name],
    committedAt: item?.timestamp
  }))
  return {
    previousSha: before.toLowerCase(),
    ...(complete && { commitCount: items.length }),
    ...readCommits(commits),
    rollback: false,
    ...(everyCommitListsFiles && { changedFiles: [...new Set(names)].map(path => ({ path })) }),
    changedFilesComplete: complete && everyCommitListsFiles,
    pullRequestsComplete: complete
  }
}
