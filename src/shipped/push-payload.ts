/**
 * With no token, or when the API is unavailable, a push event's payload still says what the push
 * brought: `before`, its `commits` (GitHub lists at most MAX_PUSH_PAYLOAD_COMMITS) and the files
 * they touched. No API call.
 */
import { collapseWhitespace } from '../text.ts'
import { MAX_COMMIT_MESSAGE_CHARS, MAX_COMMITS } from './compare.ts'
import type { ChangedPath, ShippedCommit } from './types.ts'
import { isFullSha, listOf, textOf, timestampOf, untrusted } from './untrusted.ts'

/** GitHub puts at most this many commits in a push payload; a list this long may be cut. */
export const MAX_PUSH_PAYLOAD_COMMITS = 2048

export interface PushPayloadShipped {
  previousSha: string
  /** Exact unless the payload's list may have been cut. */
  commitCount?: number
  /** The newest MAX_COMMITS, oldest first. */
  commits: ShippedCommit[]
  /** Every commit message, oldest first, for pull requests. */
  messages: string[]
  /** Files the commits added, modified or removed (each once), when every commit lists them. */
  changedFiles?: ChangedPath[]
  changedFilesComplete: boolean
}

/** The fields of a push event's payload that are read. */
interface PushPayload {
  before: string
  after: string
  commits: {
    id: string
    message: string
    timestamp: string
    author: { name: string; username: string }
    added: string[]
    modified: string[]
    removed: string[]
  }[]
}

const FILE_LISTS = ['added', 'modified', 'removed'] as const

/**
 * What a push payload says, when it describes the version being deployed (its `after`) and has a
 * real `before` (not all zeros, as for a new branch).
 */
export function shippedFromPushPayload(
  eventName: string,
  payload: unknown,
  version: string
): PushPayloadShipped | undefined {
  if (eventName !== 'push') return undefined
  const push = untrusted<PushPayload>(payload)
  const before = push?.before
  const after = push?.after
  if (!isFullSha(before) || /^0+$/.test(before)) return undefined
  if (!isFullSha(after) || after.toLowerCase() !== version.toLowerCase()) return undefined

  const items = listOf(push?.commits) ?? []
  const commits: ShippedCommit[] = []
  const messages: string[] = []
  const files = new Set<string>()
  let everyCommitListsFiles = true
  for (const item of items) {
    for (const list of FILE_LISTS) {
      const names = listOf(item?.[list])
      if (!names) everyCommitListsFiles = false
      for (const name of names ?? []) if (typeof name === 'string' && name) files.add(name)
    }
    const sha = item?.id
    if (!isFullSha(sha)) continue
    const message = textOf(item?.message) ?? ''
    const author = textOf(item?.author?.username) ?? textOf(item?.author?.name)
    const committedAt = timestampOf(item?.timestamp)
    commits.push({
      sha: sha.toLowerCase(),
      message: collapseWhitespace(message.split(/\r\n|\r|\n/, 1)[0] ?? '').slice(
        0,
        MAX_COMMIT_MESSAGE_CHARS
      ),
      ...(author ? { author: collapseWhitespace(author) } : {}),
      ...(committedAt ? { committedAt } : {})
    })
    messages.push(message)
  }
  const complete = items.length < MAX_PUSH_PAYLOAD_COMMITS
  return {
    previousSha: before.toLowerCase(),
    ...(complete ? { commitCount: items.length } : {}),
    commits: commits.slice(-MAX_COMMITS),
    messages,
    ...(everyCommitListsFiles ? { changedFiles: [...files].map(path => ({ path })) } : {}),
    changedFilesComplete: complete && everyCommitListsFiles
  }
}
