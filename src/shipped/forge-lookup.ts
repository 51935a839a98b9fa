/**
 * What a deploy ships, read from its forge's API without a checkout: GitHub's or GitLab's compare
 * of the previous deploy's commit and this one's, through the program's one bounded request. One
 * request at a time, each within what is left of the lookup's time budget, at most
 * MAX_FORGE_CALLS; the token goes to the API URL given and nowhere else (no redirect is
 * followed), and reads only repositories on its own server; a failure is one warning, and what
 * was found is kept.
 */
import { isJsonObject, parseJsonSafely } from '../helpers/json.ts'
import { collapseWhitespace, formatSeconds } from '../helpers/text.ts'
import { ACTION_NAME, ACTION_VERSION } from '../package.ts'
import { Redactor } from '../redact.ts'
import { Route, type RequestOutcome } from '../service/bounded-request.ts'
import { hostPort } from '../service/request.ts'
import type { RiskUnknown } from '../triage/risk.ts'
import { changedPaths, COMPARE_PAGE_SIZE, isFullSha, listOf, MAX_COMPARE_FILES } from './compare.ts'
import { readCommits, readComparePages, type Answer, type Range } from './compare.ts'
import { MAX_COMMITS_READ } from './git-lookup.ts'
import { pullRequestsIn } from './pull-requests.ts'
import { remoteRepository } from './remote.ts'
import { compareUrl, emptyShipped, LOOKUP_BUDGET_MS, type LookupAdvice } from './types.ts'
import type { Shipped } from './types.ts'
import { LookupError, lookupWarning } from './warning.ts'

/** Calls per lookup: GitHub's compare pages for as many commits as the git lookup reads. */
export const MAX_FORGE_CALLS = MAX_COMMITS_READ / COMPARE_PAGE_SIZE
/** A longer answer is not read: as much as the git lookup holds of a log. */
export const MAX_FORGE_ANSWER_BYTES = 16 * 1024 * 1024
/** GitLab's default bound on a diff's files: a list that reaches it may have been cut. */
export const GITLAB_MAX_DIFF_FILES = 1000
/** The most of a forge's own error message that a warning quotes. */
const MAX_QUOTED_CHARS = 200
const GITHUB_API_VERSION = '2022-11-28'

/** How GitHub's API is asked: the token as a bearer, for the version the calls are written for. */
const GITHUB_HEADERS = (token: string) => ({
  Authorization: `Bearer ${token}`,
  Accept: 'application/vnd.github+json',
  'X-GitHub-Api-Version': GITHUB_API_VERSION
})

export interface ForgeLookupOptions {
  forge: 'github' | 'gitlab'
  /** The forge's pages, for links: GITHUB_SERVER_URL, GITLAB_URL (no trailing "/"). */
  serverUrl: string
  /** Its REST API over https: GITHUB_API_URL, or GITLAB_URL + "/api/v4". The token goes nowhere else. */
  apiUrl: string
  /** '' when there is none: nothing is looked up. */
  token: string
  /** The repository's path on the server: "owner/repo", "group/subgroup/project". */
  repository: string
  /** The previous deploy's commit (a full SHA); none for a first deploy. */
  previousVersion?: string
  /** This deploy's commit (a full SHA). */
  version: string
  /** Defaults to LOOKUP_BUDGET_MS. */
  budgetMs?: number
  /** Aborted when the receiver stops: the lookup ends at once, with what it found. */
  signal?: AbortSignal
  /** How warnings name the token, in the caller's words: e.g. 'GITHUB_TOKEN'. */
  advice: LookupAdvice
}

/** A forge the caller set up: the repositories on its server are read through its API. */
export type ConfiguredForge = Omit<
  ForgeLookupOptions,
  'repository' | 'previousVersion' | 'version' | 'budgetMs' | 'signal'
>

/** What shipped, and where a GitHub repository's issues are linked (GitLab's come with it). */
export type RemoteLookup = {
  shipped: Shipped
  warning?: string
  links?: { serverUrl: string; repository: string }
}

type Api = Exclude<ReturnType<typeof openApi>, LookupError>
type Ends = { from: string; to: string; repository: string }
type Found = { range?: Range; failure?: LookupError }

/** What the range since the previous deploy ships: a Shipped value whatever failed. */
export async function lookUpWithForge(
  options: ForgeLookupOptions
): Promise<{ shipped: Shipped; warning?: string }> {
  const [from, to] = [options.previousVersion ?? '', options.version].map(sha => sha.toLowerCase())
  const forge = { kind: options.forge, web: `${options.serverUrl}/${options.repository}` }
  const unknown = (why: RiskUnknown) => ({
    shipped: { ...emptyShipped(), forge, pathsUnknown: why }
  })
  if (!isFullSha(to)) return unknown('version is not a commit')
  if (!from) return unknown('no previous deploy')
  if (!isFullSha(from)) return unknown('version is not a commit')
  const since = {
    ...emptyShipped(),
    forge,
    previousSha: from,
    compareUrl: compareUrl(forge, from, to)
  }
  if (!options.token) return { shipped: { ...since, pathsUnknown: 'no token' } }
  const api = openApi(options)
  if (api instanceof LookupError) return { shipped: since, warning: lookupWarning([api], false) }
  const ends = { from, to, repository: options.repository }
  const read = options.forge === 'github' ? githubRange : gitlabRange
  const { range, failure } = await read(api, ends)
  api.close()
  const messages = range?.messages ?? []
  const shipped = { ...since, ...range, ...pullRequestsIn(messages, forge), apiCalls: api.calls() }
  const warning = failure && lookupWarning([failure], shipped.commitCount !== undefined)
  return warning ? { shipped, warning } : { shipped }
}

/**
 * What a deploy of `repository` (its https or ssh URL, as a notification names it) shipped, from
 * the configured forge whose server hosts it. A repository on any other host is not looked up:
 * its name could make a token read another server's repository of the same path.
 */
export async function lookUpRemote(
  forges: readonly ConfiguredForge[],
  deploy: { repository?: string; version?: string; previousVersion?: string; signal?: AbortSignal }
): Promise<RemoteLookup> {
  const named = remoteRepository(deploy.repository)
  const forge =
    named && forges.find(({ serverUrl }) => URL.parse(serverUrl)?.hostname === named.host)
  // No token is configured for the repository's host: none can read it.
  if (!named || !forge) return { shipped: { ...emptyShipped(), pathsUnknown: 'no token' } }
  const { version = '', previousVersion, signal } = deploy
  const range = { version, previousVersion, signal, repository: named.path }
  const found = await lookUpWithForge({ ...forge, ...range })
  if (forge.forge === 'gitlab') return found
  return { ...found, links: { serverUrl: forge.serverUrl, repository: named.path } }
}

/** GitHub's compare, as the action reads it; a rollback's paths from the compare the other way. */
async function githubRange(api: Api, { from, to, repository }: Ends): Promise<Found> {
  const repo = repository.split('/').map(encodeURIComponent).join('/')
  const compare = (base: string, head: string, page = 1) =>
    api.get(`/repos/${repo}/compare/${base}...${head}?per_page=${COMPARE_PAGE_SIZE}&page=${page}`)
  const { range, failure } = await readComparePages(page => compare(from, to, page), api.callsLeft)
  if (!range?.rollback) return { range, failure }
  // A rollback's compare lists no path: its own are those it takes back, compared the other way.
  const back = await compare(to, from)
  const files = back instanceof LookupError ? undefined : back.files
  const fields: [string, string] = ['filename', 'previous_filename']
  const { changedFiles, changedFilesComplete } = changedPaths(
    files,
    fields,
    true,
    MAX_COMPARE_FILES
  )
  const paths = { changedFiles, changedFilesComplete }
  return { range: { ...range, ...paths }, failure: back instanceof LookupError ? back : failure }
}

/** GitLab's compare, one answer: its commits (the newest MAX_COMMITS_READ read) and its diffs. */
async function gitlabRange(api: Api, { from, to, repository }: Ends): Promise<Found> {
  const project = encodeURIComponent(repository)
  const compare = (base: string, head: string) =>
    api.get(`/projects/${project}/repository/compare?from=${base}&to=${head}`)
  const answer = await compare(from, to)
  if (answer instanceof LookupError) return { failure: answer }
  const listed = Array.isArray(answer.commits) ? answer.commits : undefined
  // Compared from their merge base, two commits with none between: the version is the older.
  const rollback = listed?.length === 0 && from !== to
  const back = rollback ? await compare(to, from) : answer
  const read: Answer = back instanceof LookupError ? {} : back
  const paths = changedPaths(read.diffs, ['new_path', 'old_path'], rollback, GITLAB_MAX_DIFF_FILES)
  const commits = listOf(listed?.slice(-MAX_COMMITS_READ)).map(commit => ({
    sha: commit.id,
    message: typeof commit.message === 'string' ? commit.message : commit.title,
    authors: [commit.author_name],
    committedAt: commit.committed_date
  }))
  const range: Range = {
    ...(listed && { commitCount: listed.length }),
    ...readCommits(commits),
    rollback,
    ...paths,
    // GitLab says when it cut the diffs, at its bounds on files, lines and bytes.
    changedFilesComplete: paths.changedFilesComplete && read.compare_timeout === false,
    pullRequestsComplete: listed !== undefined && commits.length >= listed.length
  }
  return { range, failure: back instanceof LookupError ? back : undefined }
}

/**
 * GET below the API URL: the answer's JSON object, or a LookupError saying why there is none.
 * A LookupError instead when the URL could carry the token anywhere but to the API, encrypted.
 */
function openApi({
  forge,
  token,
  apiUrl,
  budgetMs = LOOKUP_BUDGET_MS,
  signal,
  advice
}: ForgeLookupOptions) {
  const name = forge === 'github' ? 'GitHub' : 'GitLab'
  const api = URL.parse(apiUrl)
  if (api?.protocol !== 'https:' || api.username || api.password || api.search || api.hash) {
    return new LookupError(
      `${name}'s API URL is not an https:// URL without credentials, query or fragment, and the token is sent nowhere else`
    )
  }
  const root = api.href.endsWith('/') ? api.href.slice(0, -1) : api.href
  const headers = {
    ...(forge === 'github'
      ? GITHUB_HEADERS(token)
      : { 'PRIVATE-TOKEN': token, Accept: 'application/json' }),
    'User-Agent': `${ACTION_NAME}/${ACTION_VERSION}`
  }
  const route = new Route(api)
  const redactor = new Redactor()
  redactor.add(token)
  const started = Date.now()
  let calls = 0

  const noAnswer = (call: string, outcome: Exclude<RequestOutcome, { type: 'status' }>) => {
    switch (outcome.type) {
      case 'stopped':
        return `the lookup was stopped before ${call} was answered`
      case 'timeout':
        return `${name}'s API did not answer ${call} within the lookup's time budget of ${formatSeconds(budgetMs)}`
      case 'too-large':
        return `${call} answered more than ${outcome.capBytes / 1024 / 1024} MiB, which is not read`
      case 'error': {
        const { code } = outcome.error as { code?: unknown }
        const through = route.proxy ? ` through the proxy ${hostPort(route.proxy)}` : ''
        return `${call} failed with ${typeof code === 'string' ? code : outcome.error.name}${through}: ${name}'s API could not be reached`
      }
    }
  }
  /** What to do about an answer that is not the compare: the forge's own words are quoted first. */
  const advise = (status: number): string => {
    if (status >= 300 && status < 400)
      return `a redirect is never followed, so that the token stays with the API: check ${name}'s API URL`
    if (status === 200) return `no JSON object: check ${name}'s API URL and any proxy in between`
    if (status === 401) return `the token was not accepted: check ${advice.tokenInput}`
    if (status === 403 || status === 404)
      return `check that ${advice.tokenInput} may read the repository, and that both commits are in it`
    return `${name} could not answer; the next deploy will try again`
  }

  return {
    async get(path: string): Promise<Answer | LookupError> {
      const call = `GET ${path.split('?')[0]}`
      const deadlineMs = budgetMs - (Date.now() - started)
      if (deadlineMs <= 0) return new LookupError(noAnswer(call, { type: 'timeout', deadlineMs }))
      calls++
      const outcome = await route.request(new URL(root + path), {
        method: 'GET',
        headers,
        deadlineMs,
        maxAnswerBytes: MAX_FORGE_ANSWER_BYTES,
        signal
      })
      if (outcome.type !== 'status') return new LookupError(noAnswer(call, outcome))
      const { status, body } = outcome.response
      const answer = parseJsonSafely(body)
      if (status === 200 && isJsonObject(answer)) return answer
      const said = isJsonObject(answer) ? (answer.message ?? answer.error) : undefined
      const quoted =
        typeof said === 'string' && said
          ? ` ("${collapseWhitespace(redactor.excerpt(said, MAX_QUOTED_CHARS))}")`
          : ''
      return new LookupError(`${call} answered HTTP ${status}${quoted}: ${advise(status)}`)
    },
    calls: () => calls,
    callsLeft: () => MAX_FORGE_CALLS - calls,
    close: () => route.close()
  }
}
