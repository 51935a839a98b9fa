/**
 * A fake GitHub REST API over HTTPS: the few read endpoints the action uses to find what a change
 * ships (deployments and their statuses, releases, workflow runs, compare, pull requests), with
 * realistic objects, pagination and `Link` headers, for tests, the demo and the benchmark.
 *
 * Its repository is given as data (commits in order, deployments, releases, runs, pulls); lists are
 * given oldest first and served newest first, as GitHub does (compare lists commits oldest first).
 * It records every request, and faults (emulator/faults.ts) can be queued per route, written
 * without the path prefix and with '*' for the owner, the repository and each parameter.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import { createServer, type Server } from 'node:https'
import type { AddressInfo, Socket } from 'node:net'
import { answerFault, FaultQueue, parseRoute, routeMatches, segmentsMatch, send } from './faults.ts'
import type { Fault, Reply } from './faults.ts'
import { testCertificate, type TestCertificate } from './tls.ts'

export interface GitHubCommit {
  sha: string
  message: string
  /** `login` is the GitHub account; without one the commit's author is not a GitHub user. */
  author: { name: string; login?: string; email?: string }
  /** A renamed file names its old path too. */
  files?: {
    filename: string
    status?: 'added' | 'modified' | 'removed' | 'renamed'
    previous_filename?: string
  }[]
  /** The parent's SHA; default the commit before it in the list (none for the first). */
  parent?: string
  /** ISO time; default a minute after the commit before it. */
  date?: string
}

export interface GitHubDeployment {
  id: number
  sha: string
  environment: string
  /** Default the SHA. */
  ref?: string
  created_at?: string
  /** The states of its statuses, oldest first (served newest first). */
  statuses?: string[]
}

export interface GitHubRelease {
  tag_name: string
  /** A branch or a SHA. Default 'main'. */
  target_commitish?: string
  draft?: boolean
  prerelease?: boolean
  /** Default a time after the release before it; null for drafts. */
  published_at?: string | null
}

export interface GitHubWorkflowRun {
  id: number
  workflow_id: number
  head_branch: string
  head_sha: string
  /** Default 'completed'. */
  status?: string
  /** Default 'success' when completed, else null. */
  conclusion?: string | null
  /** Default 'push'. */
  event?: string
  /** Default '.github/workflows/deploy.yml'; the file name also names the workflow in URLs. */
  path?: string
  run_started_at?: string
}

export interface GitHubPull {
  number: number
  title: string
  author?: string
}

export interface GitHubRepository {
  /** owner/name */
  fullName: string
  /** Oldest first. */
  commits: GitHubCommit[]
  /** Branch and tag names to SHAs, for compare (a release's tag is found here first). */
  refs?: Record<string, string>
  /** Oldest first. */
  deployments?: GitHubDeployment[]
  /** Oldest first. */
  releases?: GitHubRelease[]
  /** Oldest first. */
  runs?: GitHubWorkflowRun[]
  pulls?: GitHubPull[]
}

export interface FakeGitHubOptions {
  repository: GitHubRepository
  /**
   * The token the API accepts. Without it any request is served; with it the repository is
   * private, as most are: no Authorization answers 404, a wrong one 401 Bad credentials.
   */
  token?: string
  /** A path prefix, e.g. '/api/v3' as on GitHub Enterprise Server. Default none. */
  prefix?: string
  /** For html_url fields. Default 'https://github.com'. */
  serverUrl?: string
  host?: string
  port?: number
  cert?: TestCertificate
}

export interface GitHubRequest {
  method: string
  /** The request target as received: the path (prefix included) and the query. */
  path: string
  headers: IncomingHttpHeaders
}

/** GitHub's default page size for lists. */
const DEFAULT_PER_PAGE = 30
/** GitHub's largest page for lists. */
const MAX_PER_PAGE = 100
/** The largest compare page: GitHub lists at most 250 commits a page. */
const MAX_COMPARE_PER_PAGE = 250
/** Compare without paging parameters lists at most this many commits, the most recent ones. */
const UNPAGED_COMPARE_COMMITS = 250
/** GitHub's compare lists at most 300 files. */
const MAX_COMPARE_FILES = 300
/** GitHub's hourly limit for a token, reported in x-ratelimit-* headers. */
const RATE_LIMIT = 5000
/** The start of the fake history; each generated time is a minute after the one before. */
const EPOCH_MS = Date.parse('2024-03-01T09:00:00Z')
const API_VERSION = '2022-11-28'
const DOCS = 'https://docs.github.com/rest'

/** Faults GitHub really answers with, for inject(). */
export const GitHubFaults = {
  badCredentials: {
    status: 401,
    body: JSON.stringify({ message: 'Bad credentials', documentation_url: DOCS, status: '401' })
  },
  rateLimited: {
    status: 403,
    headers: {
      'x-ratelimit-limit': String(RATE_LIMIT),
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Math.floor(EPOCH_MS / 1000) + 3600)
    },
    body: JSON.stringify({
      message: 'API rate limit exceeded for installation ID 1.',
      documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api`,
      status: '403'
    })
  },
  forbidden: {
    status: 403,
    body: JSON.stringify({
      message: 'Resource not accessible by integration',
      documentation_url: DOCS,
      status: '403'
    })
  },
  notFound: {
    status: 404,
    body: JSON.stringify({ message: 'Not Found', documentation_url: DOCS, status: '404' })
  },
  html: {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: '<!DOCTYPE html><html><head><title>Sign in</title></head><body>Sign in to continue</body></html>'
  },
  /** What a gateway in front of GitHub answers when the request behind it failed. */
  badGateway: {
    status: 502,
    body: JSON.stringify({ message: 'Server Error' })
  },
  hang: { hang: true },
  reset: { reset: true }
} satisfies Record<string, Fault>

type Query = URLSearchParams

interface Route {
  /** Segments after /repos/{owner}/{repo}; '*' is a parameter. */
  segments: string[]
  handle: (parameters: string[], query: Query, path: string) => Reply
}

export class FakeGitHub {
  /** The repository it serves; replace it between tests as needed. */
  repository: GitHubRepository
  /** Every request, in arrival order, including refused ones. */
  readonly requests: GitHubRequest[] = []

  private readonly server: Server
  private readonly options: FakeGitHubOptions
  private readonly prefix: string
  private readonly routes: Route[]
  private readonly sockets = new Set<Socket>()
  private readonly faults = new FaultQueue()
  /** Faults for routes written with a query ("?page=3"): only requests with those parameters take them. */
  private readonly queryFaults: { query: URLSearchParams; faults: FaultQueue }[] = []

  private constructor(server: Server, options: FakeGitHubOptions) {
    this.server = server
    this.options = options
    this.repository = options.repository
    this.prefix = (options.prefix ?? '').replace(/\/+$/, '')
    this.routes = [
      { segments: ['deployments'], handle: (_, q, p) => this.deployments(q, p) },
      {
        segments: ['deployments', '*', 'statuses'],
        handle: ([id], q, p) => this.deploymentStatuses(id, q, p)
      },
      { segments: ['releases'], handle: (_, q, p) => this.releases(q, p) },
      { segments: ['actions', 'runs', '*'], handle: ([id]) => this.run(id) },
      {
        segments: ['actions', 'workflows', '*', 'runs'],
        handle: ([id], q, p) => this.workflowRuns(id, q, p)
      },
      { segments: ['compare', '*'], handle: ([range], q, p) => this.compare(range, q, p) },
      { segments: ['pulls', '*'], handle: ([number]) => this.pull(number) }
    ]
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
    })
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.receive(req, res))
  }

  static async start(options: FakeGitHubOptions): Promise<FakeGitHub> {
    const cert = options.cert ?? (await testCertificate())
    const server = createServer({ key: cert.key, cert: cert.cert })
    const github = new FakeGitHub(server, options)
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject)
        resolve()
      })
    })
    return github
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port
  }

  /** The API's base URL, as GITHUB_API_URL gives it: no trailing slash. */
  get url(): string {
    return `https://localhost:${this.port}${this.prefix}`
  }

  /**
   * Queues a fault for a route (see Emulator.inject); `times` repeats it (Infinity: for good). A
   * route may end in a query ('?page=3'): then only requests with those parameters take it.
   */
  inject(route: string, fault: Fault, times = 1): void {
    const [path, query] = route.split('?', 2)
    if (query === undefined) {
      this.faults.add(route, fault, times)
      return
    }
    const faults = new FaultQueue()
    faults.add(path, fault, times)
    this.queryFaults.push({ query: new URLSearchParams(query), faults })
  }

  /** The recorded requests that match a route pattern (as for inject). */
  requestsTo(route: string): GitHubRequest[] {
    const pattern = parseRoute(route)
    return this.requests.filter(r => routeMatches(pattern, r.method, this.routePath(r.path)))
  }

  /** Forgets the log and the faults. */
  reset(): void {
    this.requests.length = 0
    this.faults.clear()
    this.queryFaults.length = 0
  }

  /** Stops listening and destroys every open connection, hung ones included. */
  async close(): Promise<void> {
    const closed = new Promise<void>(resolve => this.server.close(() => resolve()))
    for (const socket of this.sockets) socket.destroy()
    await closed
  }

  /** The path without the query and the prefix; '' when it is not below the prefix. */
  private routePath(target: string): string {
    const path = target.split('?')[0]
    if (!path.startsWith(`${this.prefix}/`)) return ''
    return path.slice(this.prefix.length)
  }

  private receive(req: IncomingMessage, res: ServerResponse): void {
    const record: GitHubRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers
    }
    this.requests.push(record)
    let fault = this.takeFault(record)
    req.resume()
    req.on('end', () => {
      const common = this.commonHeaders()
      if (fault !== undefined && 'status' in fault && !('redirect' in fault)) {
        fault = { ...fault, headers: { ...common, ...fault.headers } }
      }
      if (fault !== undefined) {
        const status = 'status' in fault ? (fault.status ?? 500) : 500
        answerFault(fault, req, res, errorBody('injected fault', status))
      } else {
        const reply = this.handle(record)
        send(res, { ...reply, headers: { ...common, ...reply.headers } })
      }
    })
    req.on('error', () => undefined)
  }

  /** The fault a request takes: one queued for its query first, then one for its route. */
  private takeFault(record: GitHubRequest): Fault | undefined {
    const path = this.routePath(record.path)
    const query = new URLSearchParams(record.path.split('?', 2)[1] ?? '')
    for (const queued of this.queryFaults) {
      const matches = [...queued.query].every(([name, value]) => query.get(name) === value)
      const fault = matches ? queued.faults.take(record.method, path) : undefined
      if (fault !== undefined) return fault
    }
    return this.faults.take(record.method, path)
  }

  private commonHeaders(): Record<string, string> {
    const used = Math.min(this.requests.length, RATE_LIMIT)
    return {
      'x-github-api-version-selected': API_VERSION,
      'x-ratelimit-limit': String(RATE_LIMIT),
      'x-ratelimit-remaining': String(RATE_LIMIT - used),
      'x-ratelimit-used': String(used),
      'x-ratelimit-resource': 'core'
    }
  }

  private handle(record: GitHubRequest): Reply {
    const { token } = this.options
    if (token !== undefined) {
      const authorization = record.headers.authorization
      if (authorization === undefined) return error(404, 'Not Found')
      if (authorization !== `Bearer ${token}` && authorization !== `token ${token}`) {
        return error(401, 'Bad credentials')
      }
    }
    const path = this.routePath(record.path)
    const query = new URLSearchParams(record.path.split('?')[1] ?? '')
    const segments = path.split('/').slice(1)
    const [repos, owner = '', name = '', ...rest] = segments
    if (
      record.method !== 'GET' ||
      repos !== 'repos' ||
      `${owner}/${name}`.toLowerCase() !== this.repository.fullName.toLowerCase()
    ) {
      return error(404, 'Not Found')
    }
    const route = this.routes.find(r => segmentsMatch(r.segments, rest))
    if (route === undefined) return error(404, 'Not Found')
    const parameters = route.segments.flatMap((part, i) =>
      part === '*' ? [decodeURIComponent(rest[i])] : []
    )
    return route.handle(parameters, query, record.path.split('?')[0])
  }

  private get base(): string {
    return `${this.url}/repos/${this.repository.fullName}`
  }

  private get htmlBase(): string {
    return `${this.options.serverUrl ?? 'https://github.com'}/${this.repository.fullName}`
  }

  private deployments(query: Query, path: string): Reply {
    const all = (this.repository.deployments ?? []).map((deployment, index) =>
      this.deploymentObject(deployment, index)
    )
    const matching = all
      .reverse()
      .filter(
        d =>
          ['environment', 'sha', 'ref'].every(
            field => !query.has(field) || query.get(field) === d[field as 'environment']
          ) &&
          (!query.has('task') || query.get('task') === 'deploy')
      )
    return this.page(matching, query, path, MAX_PER_PAGE)
  }

  private deploymentStatuses(id: string, query: Query, path: string): Reply {
    const index = (this.repository.deployments ?? []).findIndex(d => String(d.id) === id)
    if (index === -1) return error(404, 'Not Found')
    const deployment = (this.repository.deployments ?? [])[index]
    const created = Date.parse(this.deploymentObject(deployment, index).created_at)
    const statuses = (deployment.statuses ?? []).map((state, i) => ({
      url: `${this.base}/deployments/${id}/statuses/${deployment.id * 100 + i}`,
      id: deployment.id * 100 + i,
      state,
      description: '',
      environment: deployment.environment,
      target_url: '',
      log_url: '',
      created_at: iso(created + (i + 1) * 60_000),
      updated_at: iso(created + (i + 1) * 60_000),
      deployment_url: `${this.base}/deployments/${id}`,
      repository_url: this.base,
      creator: user('github-actions[bot]')
    }))
    return this.page(statuses.reverse(), query, path, MAX_PER_PAGE)
  }

  private deploymentObject(deployment: GitHubDeployment, index: number) {
    const created = deployment.created_at ?? iso(EPOCH_MS + index * 3_600_000)
    return {
      url: `${this.base}/deployments/${deployment.id}`,
      id: deployment.id,
      node_id: `DE_${deployment.id}`,
      sha: deployment.sha,
      ref: deployment.ref ?? deployment.sha,
      task: 'deploy',
      payload: {},
      original_environment: deployment.environment,
      environment: deployment.environment,
      description: null,
      creator: user('github-actions[bot]'),
      created_at: created,
      updated_at: created,
      statuses_url: `${this.base}/deployments/${deployment.id}/statuses`,
      repository_url: this.base,
      transient_environment: false,
      production_environment: deployment.environment === 'production'
    }
  }

  private releases(query: Query, path: string): Reply {
    const releases = (this.repository.releases ?? []).map((release, index) => {
      const created = iso(EPOCH_MS + index * 3_600_000)
      const draft = release.draft ?? false
      return {
        url: `${this.base}/releases/${index + 1}`,
        html_url: `${this.htmlBase}/releases/tag/${release.tag_name}`,
        id: index + 1,
        tag_name: release.tag_name,
        target_commitish: release.target_commitish ?? 'main',
        name: release.tag_name,
        draft,
        prerelease: release.prerelease ?? false,
        created_at: created,
        published_at:
          release.published_at !== undefined ? release.published_at : publishedAt(draft, created),
        author: user('octocat')
      }
    })
    return this.page(releases.reverse(), query, path, MAX_PER_PAGE)
  }

  private runObject(run: GitHubWorkflowRun, index: number) {
    const status = run.status ?? 'completed'
    const started = run.run_started_at ?? iso(EPOCH_MS + index * 3_600_000)
    const path = run.path ?? '.github/workflows/deploy.yml'
    return {
      id: run.id,
      name: 'Deploy',
      node_id: `WFR_${run.id}`,
      head_branch: run.head_branch,
      head_sha: run.head_sha,
      path,
      run_number: index + 1,
      run_attempt: 1,
      event: run.event ?? 'push',
      status,
      conclusion: run.conclusion !== undefined ? run.conclusion : conclusionOf(status),
      workflow_id: run.workflow_id,
      url: `${this.base}/actions/runs/${run.id}`,
      html_url: `${this.htmlBase}/actions/runs/${run.id}`,
      created_at: started,
      updated_at: started,
      run_started_at: started
    }
  }

  private run(id: string): Reply {
    const runs = this.repository.runs ?? []
    const index = runs.findIndex(run => String(run.id) === id)
    return index === -1 ? error(404, 'Not Found') : json(200, this.runObject(runs[index], index))
  }

  private workflowRuns(workflow: string, query: Query, path: string): Reply {
    const status = query.get('status')
    const runs = (this.repository.runs ?? [])
      .map((run, index) => this.runObject(run, index))
      .filter(run => String(run.workflow_id) === workflow || run.path.endsWith(`/${workflow}`))
      .filter(run => !query.has('branch') || run.head_branch === query.get('branch'))
      .filter(run => !query.has('event') || run.event === query.get('event'))
      .filter(run => !query.has('head_sha') || run.head_sha === query.get('head_sha'))
      .filter(run => status === null || runHas(run, status))
      .reverse()
    const paged = this.page(runs, query, path, MAX_PER_PAGE)
    return {
      ...paged,
      body: JSON.stringify({ total_count: runs.length, workflow_runs: JSON.parse(paged.body) })
    }
  }

  private pull(number: string): Reply {
    const pull = (this.repository.pulls ?? []).find(p => String(p.number) === number)
    if (pull === undefined) return error(404, 'Not Found')
    return json(200, {
      url: `${this.base}/pulls/${pull.number}`,
      id: pull.number * 1000,
      number: pull.number,
      state: 'closed',
      title: pull.title,
      html_url: `${this.htmlBase}/pull/${pull.number}`,
      user: user(pull.author ?? 'octocat'),
      merged_at: iso(EPOCH_MS)
    })
  }

  /** The SHA a compare end names: a ref, a full SHA, or an unambiguous prefix of 7 or more. */
  private resolve(name: string): string | undefined {
    const { commits, refs = {}, releases = [] } = this.repository
    if (refs[name] !== undefined) return refs[name]
    if (commits.some(c => c.sha === name)) return name
    const release = releases.find(r => r.tag_name === name)
    if (release?.target_commitish !== undefined && release.target_commitish !== name) {
      return this.resolve(release.target_commitish)
    }
    if (name.length < 7) return undefined
    const matches = commits.filter(c => c.sha.startsWith(name))
    return matches.length === 1 ? matches[0].sha : undefined
  }

  /** SHA → parent SHA, from the list order unless a commit names its parent. */
  private parents(): Map<string, string | undefined> {
    const parents = new Map<string, string | undefined>()
    this.repository.commits.forEach((commit, i) =>
      parents.set(commit.sha, commit.parent ?? this.repository.commits[i - 1]?.sha)
    )
    return parents
  }

  private compare(range: string, query: Query, path: string): Reply {
    const separator = range.indexOf('...')
    if (separator === -1) return error(404, 'Not Found')
    const [baseName, headName] = [range.slice(0, separator), range.slice(separator + 3)]
    const base = this.resolve(baseName)
    const head = this.resolve(headName)
    if (base === undefined || head === undefined) {
      return error(404, `No commit found for SHA: ${base === undefined ? baseName : headName}`)
    }
    const parents = this.parents()
    const chain = (sha: string | undefined): string[] => {
      const shas: string[] = []
      for (let at = sha; at !== undefined; at = parents.get(at)) shas.push(at)
      return shas
    }
    const baseChain = chain(base)
    const headChain = chain(head)
    const mergeBase = headChain.find(sha => baseChain.includes(sha))
    if (mergeBase === undefined) return error(404, 'Not Found')
    const ahead = headChain.slice(0, headChain.indexOf(mergeBase)).reverse()
    const behindBy = baseChain.indexOf(mergeBase)
    const status = COMPARE_STATUS[`${ahead.length > 0}/${behindBy > 0}`]

    const bySha = new Map(this.repository.commits.map((commit, i) => [commit.sha, { commit, i }]))
    const commitObject = (sha: string) => {
      const { commit, i } = bySha.get(sha)!
      const date = commit.date ?? iso(EPOCH_MS + i * 60_000)
      const person = {
        name: commit.author.name,
        email: commit.author.email ?? 'dev@example.com',
        date
      }
      const parent = parents.get(sha)
      return {
        sha,
        node_id: `C_${sha}`,
        url: `${this.base}/commits/${sha}`,
        html_url: `${this.htmlBase}/commit/${sha}`,
        commit: { message: commit.message, author: person, committer: person },
        author: commit.author.login ? user(commit.author.login) : null,
        committer: user('web-flow'),
        parents: parent ? [{ sha: parent, url: `${this.base}/commits/${parent}` }] : []
      }
    }

    // Without paging parameters GitHub lists the most recent commits; with them, pages from the oldest.
    const { items: listed, link } =
      query.has('page') || query.has('per_page')
        ? paginate(ahead, query, `${this.origin}${path}`, MAX_COMPARE_PER_PAGE)
        : { items: ahead.slice(-UNPAGED_COMPARE_COMMITS), link: undefined }
    const files = new Map<string, { status: string; previous_filename?: string }>()
    for (const sha of ahead) {
      for (const file of bySha.get(sha)!.commit.files ?? []) {
        // Added or renamed, then changed: still added, or renamed from its old path.
        const before = files.get(file.filename)
        const kept = before && before.status !== 'modified' && file.status !== 'removed'
        const status = kept ? before.status : (file.status ?? 'modified')
        const from = file.previous_filename ?? (kept ? before.previous_filename : undefined)
        const renamed = from && { previous_filename: from }
        files.set(file.filename, { status, ...renamed })
      }
    }
    const body = {
      url: `${this.base}/compare/${range}`,
      html_url: `${this.htmlBase}/compare/${range}`,
      permalink_url: `${this.htmlBase}/compare/${base}...${head}`,
      diff_url: `${this.htmlBase}/compare/${range}.diff`,
      patch_url: `${this.htmlBase}/compare/${range}.patch`,
      base_commit: commitObject(base),
      merge_base_commit: commitObject(mergeBase),
      status,
      ahead_by: ahead.length,
      behind_by: behindBy,
      total_commits: ahead.length,
      commits: listed.map(commitObject),
      files: [...files].slice(0, MAX_COMPARE_FILES).map(([filename, file]) => ({
        sha: '0'.repeat(40),
        filename,
        ...file,
        additions: 1,
        deletions: file.status === 'added' ? 0 : 1,
        changes: file.status === 'added' ? 1 : 2
      }))
    }
    return json(200, body, link ? { link } : undefined)
  }

  private get origin(): string {
    return `https://localhost:${this.port}`
  }

  private page(items: unknown[], query: Query, path: string, maxPerPage: number): Reply {
    const { items: listed, link } = paginate(items, query, `${this.origin}${path}`, maxPerPage)
    return json(200, listed, link ? { link } : undefined)
  }
}

/** One page of items as per_page and page ask, and the `Link` header GitHub would send. */
function paginate<T>(
  items: T[],
  query: Query,
  url: string,
  maxPerPage: number
): { items: T[]; link?: string } {
  const perPage = Math.min(
    Math.max(Number(query.get('per_page')) || DEFAULT_PER_PAGE, 1),
    maxPerPage
  )
  const page = Math.max(Math.floor(Number(query.get('page')) || 1), 1)
  const last = Math.max(Math.ceil(items.length / perPage), 1)
  const pageUrl = (n: number): string => {
    const params = new URLSearchParams(query)
    params.set('per_page', String(perPage))
    params.set('page', String(n))
    return `<${url}?${params.toString()}>`
  }
  const links: string[] = []
  if (page > 1) links.push(`${pageUrl(page - 1)}; rel="prev"`)
  if (page < last) links.push(`${pageUrl(page + 1)}; rel="next"`, `${pageUrl(last)}; rel="last"`)
  if (page > 1) links.push(`${pageUrl(1)}; rel="first"`)
  return {
    items: items.slice((page - 1) * perPage, page * perPage),
    link: links.length > 0 ? links.join(', ') : undefined
  }
}

function user(login: string) {
  return {
    login,
    id: [...login].reduce((sum, char) => sum * 31 + char.charCodeAt(0), 7) % 1_000_000,
    type: login.endsWith('[bot]') ? 'Bot' : 'User',
    html_url: `https://github.com/${login}`
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z')
}

function json(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return {
    status,
    body: JSON.stringify(value),
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers }
  }
}

function errorBody(message: string, status: number): string {
  return JSON.stringify({ message, documentation_url: DOCS, status: String(status) })
}

function error(status: number, message: string): Reply {
  return { ...json(status, {}), body: errorBody(message, status) }
}

/** GitHub's compare status, by whether the head is ahead and whether it is behind the base. */
const COMPARE_STATUS: Record<string, string> = {
  'false/false': 'identical',
  'false/true': 'behind',
  'true/false': 'ahead',
  'true/true': 'diverged'
}

/** A release's publication time: a draft has none. */
function publishedAt(draft: boolean, created: string): string | null {
  return draft ? null : created
}

/** A run's conclusion when the sample gives none: a completed run succeeded. */
function conclusionOf(status: string): string | null {
  return status === 'completed' ? 'success' : null
}

/** The API's statuses of a run (any other word in `status` is a conclusion). */
const STATUSES = ['completed', 'in_progress', 'queued', 'requested', 'waiting', 'pending']

/** Whether a run has the status asked for, or the conclusion (the API's `status` means either). */
function runHas(run: { status: string; conclusion: string | null }, status: string): boolean {
  return STATUSES.includes(status) ? run.status === status : run.conclusion === status
}
