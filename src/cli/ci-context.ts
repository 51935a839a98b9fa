/**
 * The CI a command runs in -> the change's defaults (commit, repository, who, where, the
 * pipeline's links): env-ci names the CI and reads most; variables it leaves unread fill the
 * rest; outside any CI, git (bounded) and the login do. It reads only the env and folder given.
 */
import { userInfo } from 'node:os'
import { basename } from 'node:path'
import envCi from 'env-ci'
import { withoutUndefined, type RunDefaults } from '../change.ts'
import type { Pipeline } from '../otel.ts'
import { attempt } from '../errors.ts'
import { withoutUserInfo } from '../redact.ts'
import { hasUnsafeCharacter } from '../helpers/text.ts'
import { gitEnvironment, gitIn, hasGitFolder, type Git } from '../shipped/git.ts'
import * as checkout from '../shipped/remote.ts'
import type { LookupSource } from '../shipped/lookup-source.ts'
import type { Env } from '../settings.ts'

/**
 * What the CI (or the checkout) says: `provider` is env-ci's id ('gitlab', 'jenkins', …, none
 * outside any CI), `version` the commit SHA, `service` the repository's path ('group/project'),
 * `user` who started the pipeline; where each field came from, for --debug; what the door warns.
 */
export type CiContext = Partial<Record<Field, string>> & {
  sources: Partial<Record<Field, string>>
  warnings?: string[]
}
type Field =
  | 'provider'
  | 'version'
  | 'service'
  | 'user'
  | 'environment'
  | 'branch'
  | 'tag'
  | 'pullRequest'
  | 'buildNumber'
  | 'buildUrl'
  | 'jobUrl'
  | 'previousBuild'
  | 'previousPush'
  | 'serverUrl'
  | 'repositoryUrl'
  | 'pipeline'
  | 'runId'
  | 'job'
  | 'jobId'

/** All git calls of a detection: a hung disk or an include.path FIFO must not hold a deploy. */
export const DETECTION_GIT_BUDGET_MS = 2000
/**
 * env-ci runs git with no time bound (outside any CI, and on Jenkins without GIT_COMMIT). No
 * process can start in a folder whose name holds a NUL, so it runs none: git is read here, bounded.
 */
const NO_GIT_FOLDER = '\0'
/** A value that would begin a new line wherever it is shown is no value. */
const LINE_BREAK = /[\n\v\f\r\u0085\u2028\u2029]/
/** The longest variable read: env-ci scans some in quadratic time; a CI's ids and URLs are short. */
const MAX_VARIABLE_CHARS = 1024

/** The fields that hold a link. */
const URL_FIELDS: ReadonlySet<Field> = new Set(['buildUrl', 'jobUrl', 'repositoryUrl', 'serverUrl'])
/**
 * What a repository path read from a CI variable or a remote may not hold, as a service: "." or
 * ".." segments (another repository), an "@" (a URL's credentials stand before one), and what
 * `--service` refuses (a character that breaks or reorders a line).
 */
const NOT_A_SERVICE: readonly [(path: string) => boolean, string][] = [
  [checkout.dotted, 'has a "." or ".." segment'],
  [path => path.includes('@'), 'holds an "@", which may follow credentials'],
  [hasUnsafeCharacter, 'holds a control, line-separating or bidirectional character']
]

/** By CI: each field env-ci leaves unread, as a variable (the first set of A|B), or a link in parts. */
const UNREAD: Record<string, Partial<Record<Field, string>>> = {
  // The merge request's number in its project (!42), where env-ci reads the instance-wide id.
  gitlab: {
    user: 'GITLAB_USER_LOGIN',
    environment: 'CI_ENVIRONMENT_NAME',
    jobUrl: 'CI_JOB_URL',
    pullRequest: 'CI_MERGE_REQUEST_IID',
    buildUrl: 'CI_PIPELINE_URL',
    serverUrl: 'CI_SERVER_URL',
    previousPush: 'CI_COMMIT_BEFORE_SHA',
    repositoryUrl: 'CI_PROJECT_URL',
    pipeline: 'CI_PIPELINE_NAME',
    runId: 'CI_PIPELINE_ID',
    job: 'CI_JOB_NAME',
    jobId: 'CI_JOB_ID'
  },
  // The run's number as GitHub shows it (#42), and a pull request's head branch.
  github: {
    user: 'GITHUB_ACTOR',
    buildNumber: 'GITHUB_RUN_NUMBER',
    branch: 'GITHUB_HEAD_REF',
    serverUrl: 'GITHUB_SERVER_URL',
    repositoryUrl: '$GITHUB_SERVER_URL/$GITHUB_REPOSITORY',
    pipeline: 'GITHUB_WORKFLOW',
    runId: 'GITHUB_RUN_ID',
    job: 'GITHUB_JOB'
  },
  jenkins: {
    user: 'BUILD_USER_ID|CHANGE_AUTHOR',
    branch: 'CHANGE_BRANCH',
    tag: 'TAG_NAME',
    previousBuild: 'GIT_PREVIOUS_SUCCESSFUL_COMMIT',
    repositoryUrl: 'GIT_URL',
    pipeline: 'JOB_NAME'
  },
  circleci: { user: 'CIRCLE_USERNAME', repositoryUrl: 'CIRCLE_REPOSITORY_URL', job: 'CIRCLE_JOB' },
  buildkite: {
    user: 'BUILDKITE_BUILD_CREATOR',
    jobUrl: '$BUILDKITE_BUILD_URL#$BUILDKITE_JOB_ID',
    pipeline: 'BUILDKITE_PIPELINE_SLUG',
    runId: 'BUILDKITE_BUILD_ID',
    job: 'BUILDKITE_LABEL',
    jobId: 'BUILDKITE_JOB_ID'
  },
  azurePipelines: {
    user: 'BUILD_REQUESTEDFOR',
    environment: 'ENVIRONMENT_NAME',
    runId: 'BUILD_BUILDID',
    repositoryUrl: 'BUILD_REPOSITORY_URI',
    pipeline: 'BUILD_DEFINITIONNAME',
    job: 'SYSTEM_JOBDISPLAYNAME',
    jobId: 'SYSTEM_JOBID',
    buildUrl: '$SYSTEM_COLLECTIONURI/$SYSTEM_TEAMPROJECT/_build/results?buildId=$BUILD_BUILDID'
  },
  bitbucket: {
    environment: 'BITBUCKET_DEPLOYMENT_ENVIRONMENT',
    pullRequest: 'BITBUCKET_PR_ID',
    repositoryUrl: 'BITBUCKET_GIT_HTTP_ORIGIN',
    buildUrl: '$BITBUCKET_GIT_HTTP_ORIGIN/pipelines/results/$BITBUCKET_BUILD_NUMBER'
  }
}

/**
 * The CI's context, from `env` and the checkout at `cwd`. Never throws; unknown stays undefined.
 * git is asked only what neither the CI nor the user (`givenService`) says.
 */
export async function detectCiContext(
  env: Env,
  cwd: string,
  {
    budgetMs = DETECTION_GIT_BUDGET_MS,
    signal,
    givenService,
    // Outside a checkout git is not started at all.
    git = hasGitFolder(cwd)
      ? gitIn(
          cwd,
          gitEnvironment(env),
          AbortSignal.any([AbortSignal.timeout(budgetMs), ...(signal ? [signal] : [])])
        )
      : undefined
  }: { budgetMs?: number; signal?: AbortSignal; givenService?: string; git?: Git } = {}
): Promise<CiContext> {
  const context: CiContext = { sources: {} }
  /** The first usable value of a field wins, with where it came from; `value` is read lazily. */
  const take = (field: Field, source: string, value?: string | (() => string | undefined)) => {
    if (context[field] !== undefined) return
    const text = (typeof value === 'function' ? value() : value)?.trim()
    if (!text || LINE_BREAK.test(text)) return
    // A link never keeps its credentials (https://TOKEN@host/…): recorded, printed or written.
    context[field] = URL_FIELDS.has(field) ? withoutUserInfo(text) : text
    context.sources[field] = source
  }
  const read = readable(env)
  // A CI env-ci fails on (Netlify without REPOSITORY_URL) is a CI without a name.
  const ci = attempt(() => envCi({ env: read, cwd: NO_GIT_FOLDER })) ?? { isCi: true }
  if (ci.service) {
    take('provider', 'env-ci', ci.service)
    for (const [field, names] of Object.entries(UNREAD[ci.service] ?? {}) as [Field, string][])
      for (const name of names.split('|'))
        take(field, name, name.includes('$') ? link(name, read) : read[name])
    const from = `env-ci (${ci.name})`
    take('version', from, ci.commit)
    take('service', from, checkout.cleanPath(serviceFrom(from, whole(ci.slug))))
    take('buildNumber', from, ci.build)
    take('runId', from, ci.build)
    take('buildUrl', from, whole(ci.buildUrl))
    take('jobUrl', from, whole(ci.jobUrl))
    take('tag', from, ci.tag)
    take('pullRequest', from, ci.pr?.toString())
    // A pull request ships its own branch; GitHub and Azure name refs whole ("refs/pull/7/merge").
    const ref = (ci.isPr ? ci.prBranch : ci.branch) ?? ''
    take('pullRequest', from, /^refs\/pull\/(\d+)\//.exec(ref)?.[1])
    if (ref.startsWith('refs/tags/')) take('tag', from, ref.slice('refs/tags/'.length))
    else if (!ref.startsWith('refs/') && ref !== context.tag) take('branch', from, ref)
  } else if (!ci.isCi) {
    // Only a person's own run: in a CI (even one env-ci does not know), the login is the runner's.
    for (const name of ['USER', 'USERNAME']) take('user', name, read[name])
    // No account entry for this user id (a container's bare uid) is no login.
    take('user', 'the login', () => attempt(() => userInfo().username))
  }
  /** git's answer, unless what it would tell is `known`; none when it fails, is cut or too late. */
  const ask = async (known: string | undefined, ...args: string[]) => {
    const answer = known === undefined ? await git?.(args).catch(() => undefined) : undefined
    return answer?.cut || answer?.said !== undefined ? undefined : answer?.out
  }
  // HEAD even when a version is given: it is the change's commit for OpenTelemetry's names.
  take('version', 'git rev-parse HEAD', await ask(context.version, 'rev-parse', 'HEAD'))
  const head = await ask(context.tag ?? context.branch, 'symbolic-ref', '--short', '-q', 'HEAD')
  take('branch', 'git symbolic-ref HEAD', head)
  const service = () => context.service ?? givenService
  const origin = await ask(context.repositoryUrl && service(), 'remote', 'get-url', 'origin')
  const remote = 'the origin remote'
  take('repositoryUrl', remote, origin)
  // A remote that climbs out ("..") has no path to read: it is refused whole, and said.
  const path = checkout.dotted(origin ?? '') ? origin : checkout.remoteRepository(origin)?.path
  take('service', remote, () => serviceFrom(remote, path))
  const top = await ask(service(), 'rev-parse', '--show-toplevel')
  take('service', 'the folder name', basename(top?.trim() || cwd))
  // Kept only as a page, never with its credentials (an https remote may carry a token).
  const page = checkout.repositoryPage(context.repositoryUrl, { url: context.serverUrl })
  context.repositoryUrl = page?.url
  return context

  /** A repository path that cannot be a service (see NOT_A_SERVICE): not taken, and said. */
  function serviceFrom(source: string, path?: string) {
    const problem = path && NOT_A_SERVICE.find(([refused]) => refused(path))?.[1]
    if (!problem) return path
    context.warnings ??= []
    context.warnings.push(
      `Not taken as the service: the repository path from ${source} ${problem}.`
    )
  }
}

/**
 * The variables read, trimmed, here and by env-ci alike; left out: a long value or one with a line
 * break (env-ci throws on such a branch), the event file (it reads it whole, and throws when a
 * pull_request_target's is missing), BUILDKITE_REPO (it scans it in cubic time).
 */
function readable(env: Env): Env {
  const read: Env = {}
  for (const [name, value] of Object.entries(env)) {
    const text = value?.trim() ?? ''
    if (text && text.length <= MAX_VARIABLE_CHARS && !LINE_BREAK.test(text)) read[name] = text
  }
  delete read['GITHUB_EVENT_PATH']
  delete read['BUILDKITE_REPO']
  return read
}

/** The context as the change's defaults: `custom_metadata.ci`, and the build's page as a link. */
export function ciDefaults(ci: CiContext, cwd: string): RunDefaults {
  const { service, version, user, environment, branch } = ci
  const kind = (['github', 'gitlab', 'bitbucket'] as const).find(name => name === ci.provider)
  const page = checkout.repositoryPage(ci.repositoryUrl, { url: ci.serverUrl, kind })
  return {
    ...{ service, version, user, environment, branch },
    metadata: { key: 'ci', fields: ciMetadata(ci), shippedKey: 'git' },
    runLink: runLinkOf(ci),
    workspace: cwd,
    // Where the run comes from; the repository's page holds no credentials.
    pipeline: withoutUndefined({
      repositoryUrl: page?.url,
      provider: page?.provider ?? kind,
      ref: refOf(ci.tag, branch),
      name: ci.pipeline,
      runId: ci.runId,
      runUrl: ci.buildUrl,
      task: ci.job,
      taskId: ci.jobId,
      taskUrl: ci.jobUrl
    })
  }
}

/**
 * The run's page, named as its CI names it: on GitLab its pipeline ("Pipeline 4242"); elsewhere
 * the job's page when there is one, else the build's ("Build 42").
 */
function runLinkOf(ci: CiContext): RunDefaults['runLink'] {
  if (ci.provider === 'gitlab' && ci.buildUrl) {
    return { text: `Pipeline ${ci.buildNumber ?? ''}`.trim(), url: ci.buildUrl }
  }
  const url = ci.jobUrl ?? ci.buildUrl
  if (!url) return undefined
  return { text: ci.buildNumber ? `Build ${ci.buildNumber}` : 'Build', url }
}

/** The tag the run is for, else its branch. */
function refOf(tag?: string, branch?: string): Pipeline['ref'] {
  if (tag) return { name: tag, type: 'tag' }
  return branch ? { name: branch, type: 'branch' } : undefined
}

/** The change's `custom_metadata.ci`: what is known of the CI's run, in snake_case. */
export function ciMetadata(context: CiContext): Record<string, unknown> {
  const { provider, buildNumber, buildUrl, jobUrl, branch, tag, pullRequest } = context
  const fields = { provider, build_number: buildNumber, build_url: buildUrl, job_url: jobUrl }
  return withoutUndefined({ ...fields, branch, tag, pull_request: pullRequest })
}

/**
 * Where what shipped is read: the checkout, with what the CI says; `named` is how the
 * previous-version setting is named, `previousVersion` its value.
 */
export function checkoutSource(
  env: Env,
  ci: CiContext,
  cwd: string,
  { named, previousVersion }: { named: string; previousVersion?: string }
): LookupSource {
  const { provider, serverUrl: url, tag, previousBuild, previousPush } = ci
  const kind = provider === 'github' || provider === 'gitlab' ? provider : undefined
  const server = kind && url ? ({ kind, url } as const) : undefined
  const advice = { previousVersion: named }
  const options = { cwd, env, tag, previousBuild, previousPush, previousVersion, server, advice }
  return { from: 'git', options: { ...options, ci: provider } }
}

/** A link from its template and the variables read (trimmed); none if one is unset. */
function link(template: string, read: Env): string | undefined {
  let whole = true
  const url = template.replace(/\$([A-Z_]+)/g, (_, name: string) => {
    whole &&= read[name] !== undefined
    return (read[name] ?? '').replace(/\/$/, '').replaceAll(' ', '%20')
  })
  return whole ? url : undefined
}

/** A value env-ci built from parts, unless a part was missing (it writes "undefined" there). */
function whole(value: string | undefined): string | undefined {
  return value?.split(/[/#.]/).includes('undefined') ? undefined : value
}
