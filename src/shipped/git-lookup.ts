/**
 * What a change ships, read from the checkout's history with git: the same Shipped value as the
 * GitHub lookup, with no token and no network. git runs without a shell, never fetches, never runs
 * a hook, fsmonitor or program the repository's configuration names, within the lookup's time
 * budget and a bound on what each call prints. A gap is one warning, and what was found is kept.
 */
import type { ChangedPath } from '../services/selection.ts'
import type { RiskUnknown } from '../triage/risk.ts'
import type { Env } from '../settings.ts'
import { formatSeconds, truncateText } from '../helpers/text.ts'
import { COMPARE_PAGE_SIZE, isFullSha, MAX_COMMIT_TEXT_READ_CHARS, readCommits } from './compare.ts'
import { pullRequestsIn } from './pull-requests.ts'
import { compareUrl, emptyShipped, LOOKUP_BUDGET_MS, type Forge, type Shipped } from './types.ts'
import type { LookupOptions, PreviousDeploySource } from './types.ts'
import { failureIn, LookupError, lookupWarning } from './warning.ts'
import { gitEnvironment, gitIn, hasGitFolder, type GitAnswer, type Git, type Keep } from './git.ts'
import { repositoryPage } from './remote.ts'

/** What the door knows of the run, as plain data; all but cwd, env, version and advice optional. */
export type GitLookupOptions = Pick<LookupOptions, 'previousVersion' | 'budgetMs' | 'signal'> & {
  /** A folder in the checkout. The names below are trimmed, and empty ones absent. */
  cwd: string
  /** The door's variables: git runs with them, but for any GIT_* and the locale (gitEnvironment). */
  env: Env
  /** What is deployed: a SHA, a tag or a ref; a name git does not know, but a SHA, reads HEAD. */
  version: string
  /** The commit of the CI's previous successful build (Jenkins' GIT_PREVIOUS_SUCCESSFUL_COMMIT). */
  previousBuild?: string
  /** The CI's tag for this build (GitLab's CI_COMMIT_TAG), when the version is no tag. */
  tag?: string
  /** The commit before this push (GitLab's CI_COMMIT_BEFORE_SHA, a push event's `before`). */
  previousPush?: string
  /** The run's own server (GITHUB_SERVER_URL, CI_SERVER_URL): a remote on its host is linked. */
  server?: { kind: 'github' | 'gitlab'; url: string }
  /** The CI, as env-ci names it ('github', 'gitlab', …): what a shallow clone's warning advises. */
  ci?: string
  /** The door's words: how its previous-version setting is named. */
  advice: { previousVersion: string }
}

/** Commits read from the range: as many as the GitHub lookup reads (ten compare pages). */
export const MAX_COMMITS_READ = 10 * COMPARE_PAGE_SIZE
/** What is held of `git log` for them, each field within MAX_LOG_FIELD_BYTES. */
const MAX_LOG_BYTES = 16 * 1024 * 1024
/** Held of each field: 3 bytes (UTF-8's most a UTF-16 unit) per character read, and one more. */
const MAX_LOG_FIELD_BYTES = 3 * MAX_COMMIT_TEXT_READ_CHARS + 1
/** What the list of changed paths may print, and each commit's paths: every path of a large deploy. */
const MAX_PATHS_BYTES = 4 * 1024 * 1024
/** The most of git's own error line a warning quotes. */
const MAX_QUOTED_CHARS = 200
/** Never a signature check (log.showSignature would run gpg.program), at most MAX_COMMITS_READ. */
const LOG_OPTIONS = ['--no-show-signature', `--max-count=${MAX_COMMITS_READ}`]
/**
 * Per commit its SHA, author, committer date and whole message, each ended by a NUL, newest first:
 * a cut at the bound drops the oldest, and says so.
 */
const LOG = ['log', ...LOG_OPTIONS, '--encoding=UTF-8', '-z', '--format=%H%x00%an%x00%cI%x00%B']
/** Each commit's paths, a merge's against its first parent, a rename as a removal and an addition. */
const PATHS_ONLY = ['--name-only', '--no-renames', '--diff-merges=first-parent']
/** PATHS_ONLY after a \x01 and each commit's SHA. */
const TOUCHED = ['log', ...LOG_OPTIONS, '-z', '--format=%x01%H', ...PATHS_ONLY]
const DIFF = ['diff-tree', '-r', '-z', '--name-status', '--no-commit-id']
const DESCRIBE = ['describe', '--tags', '--abbrev=0']

const CANCELLED = 'the run was cancelled while git read the history'
const LOG_CUT = `git log printed more than ${MAX_LOG_BYTES / 1024 / 1024} MiB: the oldest commits were not read`
/** Formatted when said: the first toLocaleString loads the locale's data, a tenth of a start. */
const tooLong = (sha: string): string =>
  `the message of commit ${sha} (the newest such) is longer than the ${MAX_COMMIT_TEXT_READ_CHARS.toLocaleString('en')} characters read of each: only its start was read`
/** Rules in messages, but the setting's (the door names it) and the tag's (never unknown). */
const RULE_WORDS: Record<string, string> = {
  'previous-push': 'the previous push',
  'previous-build': "the CI's previous successful build"
}
type Previous = { sha: string; source: PreviousDeploySource }
type LogItem = { sha: string; message: string; authors: string[]; committedAt: string }

/** How each CI clones the whole history, for a shallow clone that lacks the previous deploy. */
const FULL_HISTORY: Record<string, string> = {
  gitlab: "set GIT_DEPTH: 0 in the job's variables",
  github: 'set fetch-depth: 0 on actions/checkout',
  jenkins: 'turn off "Shallow clone" in the job\'s Git clone behaviours',
  azurePipelines: 'set fetchDepth: 0 on the checkout step',
  bitbucket: 'set clone: depth: full'
}

/** How the CI (env-ci's id) clones the whole history. */
const fullHistoryAdvice = (provider = ''): string =>
  FULL_HISTORY[provider] ?? 'clone the whole history (no --depth)'

export async function lookUpInCheckout(
  options: GitLookupOptions
): Promise<{ shipped?: Shipped; warning?: string }> {
  const { budgetMs = LOOKUP_BUDGET_MS, signal: cancelled } = options
  const budget = new AbortController()
  const spent = `git did not answer within the lookup's time budget of ${formatSeconds(budgetMs)}`
  const stop = () => budget.abort(new LookupError(cancelled?.aborted ? CANCELLED : spent))
  const either = AbortSignal.any([AbortSignal.timeout(budgetMs), ...(cancelled ? [cancelled] : [])])
  either.addEventListener('abort', stop, { once: true })
  if (either.aborted) stop()
  const git = gitIn(options.cwd, gitEnvironment(options.env), budget.signal)
  const found = await readHistory(git, options)
  const warning = found.gap && lookupWarning([found.gap], found.count !== undefined)
  // Without the version's commit nothing was read: the change is recorded without what shipped,
  // but why its paths are unknown when that is no failure.
  if (!found.head) {
    const { pathsUnknown } = found
    return pathsUnknown ? { shipped: { ...emptyShipped(), pathsUnknown }, warning } : { warning }
  }
  const page = repositoryPage(found.remote, options.server)
  // On the CI's own GitLab the numbers are GitLab's, even when the remote's pages are unknown.
  const gitlab = options.server?.kind === 'gitlab' ? { kind: 'gitlab' as const } : undefined
  const forge = page?.provider ? { web: page.url, kind: page.provider } : gitlab
  const shipped = shippedOf({ ...found, head: found.head }, forge)
  return warning ? { shipped, warning } : { shipped }
}

/** What the history said: each stage's part, the stages before it kept when one fails. */
interface Found {
  head?: string
  remote?: string
  previous?: Previous
  rollback?: boolean
  count?: number
  log?: LogItem[]
  files?: { paths: ChangedPath[]; complete: boolean }
  touched?: Record<string, string[]>
  /** Why no changed path can be read, when that is no failure. */
  pathsUnknown?: RiskUnknown
  /** The first gap, which the warning names. */
  gap?: LookupError
}

/** The checkout as the stages read it: git in it, the door's options, the version's commit. */
type Checkout = { git: Git; options: GitLookupOptions; head: string; shallow: boolean }

/** Each stage's part over what the stages before it found; the first gap is the one said. */
async function readHistory(git: Git, options: GitLookupOptions): Promise<Found> {
  let found: Found = {}
  for await (const part of historyStages(git, options))
    found = { ...found, ...part, gap: found.gap ?? part.gap }
  return found
}

/** Each stage's part in turn; git's refusal, the budget or a cancel ends them, with a gap. */
async function* historyStages(git: Git, options: GitLookupOptions): AsyncGenerator<Found> {
  try {
    // No .git in the folder or above it: no checkout, said without starting git at all.
    if (!hasGitFolder(options.cwd)) {
      yield { pathsUnknown: 'no checkout' }
      throw new LookupError(`${options.cwd} is not in a git checkout`)
    }
    const shallow = (await git(['rev-parse', '--is-shallow-repository'])).out.trim() === 'true'
    const named = await commitOf(git, options.version)
    // A SHA the checkout lacks is no name for HEAD: what HEAD ships would be recorded for it.
    const sha = /^[0-9a-f]{7,40}$/i.test(options.version)
    const head = named ?? (sha ? undefined : await commitOf(git, 'HEAD'))
    if (!head) {
      yield { pathsUnknown: 'version is not a commit' }
      const missing = `the checkout does not have the commit ${options.version}`
      throw new LookupError(sha ? missing : 'the checkout has no commit to deploy')
    }
    yield { head, remote: (await git(['remote', 'get-url', 'origin'])).out.trim() }
    const checkout = { git, options, head, shallow }
    const { previous, gap } = await findPrevious(checkout)
    const range = previous && (await rangeStart(checkout, previous))
    const firstDeploy = !previous && !gap && { pathsUnknown: 'no previous deploy' as const }
    yield { previous, rollback: range?.rollback, gap: gap ?? range?.gap, ...firstDeploy }
    const since = range?.since
    const revisions = since ? [`${since}..${head}`] : ['--no-walk', head]
    if (since) yield await commitCount(git, revisions)
    // A rollback ships no commit: its paths are those it takes back.
    if (!range?.rollback) yield await commitLog(git, revisions)
    if (range?.from) yield await changedPaths(git, range.from, head)
    if (since) yield await touchedPaths(git, revisions)
  } catch (error) {
    yield { gap: failureIn(error) }
  }
}

/** git's answer, or the gap when git says why it failed (an object the checkout lacks). */
async function readGit(git: Git, args: string[], maxBytes?: number, keep?: Keep) {
  const answer = await git(args, maxBytes, keep)
  const line = answer.said?.split('\n').find(said => !/^\s*(?:$|warning:|hint:)/.test(said))
  const quoted = line && truncateText(line.trim(), MAX_QUOTED_CHARS)
  return quoted ? { gap: new LookupError(`git ${args[0]} failed: "${quoted}"`) } : { answer }
}

/** Where the range starts (nowhere when the history between is cut), and its paths change from. */
async function rangeStart({ git, options, head, shallow }: Checkout, previous: Previous) {
  const { answer, gap } = await readGit(git, ['merge-base', previous.sha, head])
  const base = answer?.out.trim()
  if (previous.sha !== head && base === head) return { rollback: true, from: previous.sha }
  // In a shallow clone, a previous deploy that is no ancestor may lie past the cut history; a
  // partial clone may lack a commit between the two: only the version's commit is read then.
  if (!answer) return { rollback: false, gap }
  if (shallow && base !== previous.sha)
    return { rollback: false, gap: shallowGap(options, `the history since ${previous.sha}`) }
  return { rollback: false, since: previous.sha, from: base || previous.sha }
}

async function commitCount(git: Git, revisions: string[]): Promise<Found> {
  const { answer, gap } = await readGit(git, ['rev-list', '--count', ...revisions])
  const count = answer?.out.trim() ?? ''
  return /^\d{1,9}$/.test(count) ? { count: Number(count), gap } : { gap }
}

/** The range's commits; a log past its bound, or a message longer than is read, is a gap. */
async function commitLog(git: Git, revisions: string[]): Promise<Found> {
  const fields = fieldStarts(MAX_LOG_FIELD_BYTES)
  const { answer, gap } = await readGit(git, [...LOG, ...revisions], MAX_LOG_BYTES, fields.keep)
  const log = logItems(answer, fields.cut)
  const cut = answer?.cut ? new LookupError(LOG_CUT) : undefined
  const long = log.findLast(item => item.message.length > MAX_COMMIT_TEXT_READ_CHARS)
  const longGap = long && new LookupError(tooLong(long.sha))
  // A log git could not print leaves the count unsaid, as it leaves the commits.
  return { log, gap: gap ?? cut ?? longGap, ...(!answer && { count: undefined }) }
}

/** The paths changed from `from`; rename detection needs contents a blobless clone lacks. */
async function changedPaths(git: Git, from: string, head: string): Promise<Found> {
  const diff = (renames: string) => [...DIFF, renames, from, head]
  const detected = await git(diff('-M'), MAX_PATHS_BYTES)
  if (detected.said === undefined) return { files: pathsIn(detected) }
  const { answer, gap } = await readGit(git, diff('--no-renames'), MAX_PATHS_BYTES)
  return { files: answer && pathsIn(answer), gap }
}

/** Each commit's paths as TOUCHED prints them; none when cut, as the last commit's may be partial. */
async function touchedPaths(git: Git, revisions: string[]): Promise<Found> {
  const { answer, gap } = await readGit(git, [...TOUCHED, ...revisions], MAX_PATHS_BYTES)
  if (!answer || answer.cut) return { gap }
  const touched: Record<string, string[]> = {}
  let paths: string[] = []
  for (const field of answer.out.split('\0')) {
    const sha = field.slice(1)
    if (field.startsWith('\x01') && isFullSha(sha)) {
      paths = []
      touched[sha] = paths
    } else if (field) paths.push(field.replace(/^\n/, ''))
  }
  return { touched }
}

/**
 * The previous deploy, by the first rule that names one: the previous-version setting, the CI's
 * previous successful build, the nearest tag before the version's tag (as `git describe --tags
 * --abbrev=0 <version>^` finds it), the previous push. A name git does not know is a gap.
 */
async function findPrevious({ git, options, head, shallow }: Checkout): Promise<Found> {
  const resolved = async (source: PreviousDeploySource, ref: string) => {
    const sha = await commitOf(git, ref)
    if (sha) return { previous: { sha, source } }
    if (shallow) return { gap: shallowGap(options, `the previous deploy ${ref}`) }
    const rule = source === 'input' ? options.advice.previousVersion : RULE_WORDS[source]
    return { gap: new LookupError(`${rule} names "${ref}", which is no commit in this checkout`) }
  }
  const { version, previousVersion, previousBuild, tag, previousPush: push } = options
  if (previousVersion) return resolved('input', previousVersion)
  if (previousBuild) return resolved('previous-build', previousBuild)
  // A tag's commit, never an annotated tag object's SHA.
  const isTag = (await commitOf(git, `refs/tags/${version}`)) === head
  const tagged = isTag ? head : tag && (await commitOf(git, `refs/tags/${tag}`))
  if (tagged) {
    // A release's previous one is a release, never its own candidate (v4.6.7, not v4.6.8-rc2).
    const name = isTag ? version : (tag ?? '')
    const at = name.search(/\.[0-9]/)
    const release = at === -1 || name.indexOf('-', at) === -1 ? ['--exclude=*.[0-9]*-*'] : []
    const described = await git([...DESCRIBE, ...release, '--end-of-options', `${tagged}^`])
    const earlier = described.out.trim()
    if (earlier) return resolved('previous-tag', `refs/tags/${earlier}`)
    if (shallow) return { gap: shallowGap(options, `the tags before ${name}`) }
  }
  // All zeros: a new branch, with no commit before it.
  if (isFullSha(push) && !/^0+$/.test(push)) return resolved('previous-push', push)
  return {}
}

const shallowGap = ({ ci }: GitLookupOptions, lacking: string): LookupError =>
  new LookupError(`the checkout is a shallow clone without ${lacking}: ${fullHistoryAdvice(ci)}`)

/** The full SHA of the commit a name resolves to, if git knows one. */
async function commitOf(git: Git, name: string): Promise<string | undefined> {
  const args = ['rev-parse', '--verify', '-q', '--end-of-options', `${name}^{commit}`]
  const sha = name ? (await git(args)).out.trim() : undefined
  return isFullSha(sha) ? sha.toLowerCase() : undefined
}

/**
 * Keeps each NUL-ended field's first `maxBytes` across what git prints, and the place of each
 * field it cut: a message of any size costs its start, and every field after it is still read.
 */
function fieldStarts(maxBytes: number): { keep: Keep; cut: Set<number> } {
  const cut = new Set<number>()
  let field = 0
  let held = 0
  const keep = (printed: Buffer) => {
    const kept: Buffer[] = []
    for (let at = 0; at <= printed.length;) {
      const nul = printed.indexOf(0, at)
      const end = nul === -1 ? printed.length : nul
      kept.push(printed.subarray(at, Math.min(end, at + Math.max(maxBytes - held, 0))))
      held += end - at
      if (held > maxBytes) cut.add(field)
      if (nul === -1) break
      kept.push(printed.subarray(nul, nul + 1))
      field += 1
      held = 0
      at = nul + 1
    }
    return Buffer.concat(kept)
  }
  return { keep, cut }
}

/** Commits as `git log -z` prints LOG, oldest first; one cut at the bound is left out. */
function logItems(answer: GitAnswer | undefined, cut: Set<number>): LogItem[] {
  const fields = (answer?.out ?? '').split('\0')
  const items: LogItem[] = []
  for (let at = 0; at + 4 < fields.length; at += 4) {
    const [sha, author, committedAt, message] = fields.slice(at, at + 4)
    if (!isFullSha(sha)) continue
    // A message cut stays as held, longer than what is read of it: known as cut.
    const text = cut.has(at + 3) ? message : message.trimEnd()
    items.push({ sha, message: text, authors: [author], committedAt })
  }
  return items.reverse()
}

/**
 * Paths as `git diff-tree -z --name-status -M` prints them: a status, then the path, or for a
 * rename the old path and the new; every one within the bound, exactly as git gives them.
 */
function pathsIn(answer: GitAnswer): Found['files'] {
  const fields = answer.out.split('\0')
  const paths: ChangedPath[] = []
  let at = 0
  while (at + 1 < fields.length) {
    const [status, path, renamedTo] = fields.slice(at, at + 3)
    const renamed = status.startsWith('R')
    at += renamed ? 3 : 2
    if (at >= fields.length) break
    paths.push(renamed ? { path: renamedTo, previousPath: path } : { path })
  }
  return { paths, complete: !answer.cut && at === fields.length - 1 }
}

/** The Shipped value of what the stages found, as the GitHub lookup composes its own. */
function shippedOf(found: Found & { head: string }, forge: Forge | undefined): Shipped {
  const { head, previous, count, log = [], files, touched } = found
  const read = readCommits(log)
  const messages = log.map(item => item.message)
  return {
    ...emptyShipped(),
    readFrom: 'git',
    ...(previous && { previousSha: previous.sha, source: previous.source }),
    ...(previous && forge?.web && { compareUrl: compareUrl(forge, previous.sha, head) }),
    ...(count !== undefined && { commitCount: count }),
    ...read,
    ...pullRequestsIn(messages, forge),
    pullRequestsComplete: count !== undefined && read.commits.length >= count,
    rollback: found.rollback ?? false,
    ...(files && { changedFiles: files.paths, changedFilesComplete: files.complete }),
    ...(found.pathsUnknown && { pathsUnknown: found.pathsUnknown }),
    ...(touched && { touched }),
    ...(forge && { forge })
  }
}
