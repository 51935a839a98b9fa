import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync
} from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { basename, join } from 'node:path'
import {
  checkoutSource,
  ciDefaults,
  ciMetadata,
  detectCiContext,
  type CiContext
} from '../../src/cli/ci-context.ts'
import type { Env } from '../../src/settings.ts'
import type { Git } from '../../src/shipped/git.ts'
import { lookUpShipped } from '../../src/shipped/lookup-source.ts'
import { gitEnv, TestRepository } from '../support/git-repository.ts'

const SHA = '3f786850e387550fdab836ed7e6dc881de23001b'
const PREVIOUS_PUSH = '9f2c1d0e8b7a69584736251403f2e1d0c9b8a796'

/** A git that knows only these answers (by its arguments), and remembers what it was asked. */
function fakeGit(answers: Record<string, string> = {}): Git & { asked: string[] } {
  const asked: string[] = []
  const answer = (out?: string) =>
    out === undefined ? { out: '', cut: false, said: '' } : { out, cut: false }
  return Object.assign(
    async (args: string[]) => {
      asked.push(args.join(' '))
      return answer(answers[args.join(' ')])
    },
    { asked }
  )
}

/** Read only for where the run comes from, which is tested apart (ciDefaults' pipeline). */
const OTEL_ONLY = new Set(['repositoryUrl', 'pipeline', 'runId', 'job', 'jobId'])

/** The detected values the change's defaults read, without where each came from. */
function fieldsOf(context: CiContext): Partial<CiContext> {
  return Object.fromEntries(
    Object.entries(context).filter(([key]) => key !== 'sources' && !OTEL_ONLY.has(key))
  )
}

describe('detectCiContext in each CI, from the variables it documents', () => {
  it('GitLab CI: the project path, who started the pipeline, the environment and both links', async () => {
    const env: Env = {
      CI: 'true',
      GITLAB_CI: 'true',
      CI_SERVER_URL: 'https://gitlab.example.com',
      CI_PROJECT_URL: 'https://gitlab.example.com/acme/platform/shop',
      CI_PROJECT_PATH: 'acme/platform/shop',
      CI_PROJECT_DIR: '/builds/acme/platform/shop',
      CI_COMMIT_SHA: SHA,
      CI_COMMIT_BEFORE_SHA: PREVIOUS_PUSH,
      CI_COMMIT_REF_NAME: 'main',
      CI_COMMIT_BRANCH: 'main',
      CI_PIPELINE_ID: '1187',
      CI_PIPELINE_IID: '311',
      CI_PIPELINE_URL: 'https://gitlab.example.com/acme/platform/shop/-/pipelines/1187',
      CI_JOB_ID: '5521',
      CI_JOB_URL: 'https://gitlab.example.com/acme/platform/shop/-/jobs/5521',
      CI_ENVIRONMENT_NAME: 'production',
      GITLAB_USER_LOGIN: 'jdoe',
      GITLAB_USER_NAME: 'Jane Doe',
      USER: 'gitlab-runner'
    }
    const git = fakeGit()
    const context = await detectCiContext(env, '/builds/acme/platform/shop', { git })

    expect(fieldsOf(context)).toEqual({
      provider: 'gitlab',
      version: SHA,
      service: 'acme/platform/shop',
      user: 'jdoe',
      environment: 'production',
      branch: 'main',
      buildNumber: '1187',
      buildUrl: 'https://gitlab.example.com/acme/platform/shop/-/pipelines/1187',
      jobUrl: 'https://gitlab.example.com/acme/platform/shop/-/jobs/5521',
      serverUrl: 'https://gitlab.example.com',
      previousPush: PREVIOUS_PUSH
    })
    expect(context.sources).toMatchObject({
      user: 'GITLAB_USER_LOGIN',
      environment: 'CI_ENVIRONMENT_NAME',
      buildUrl: 'CI_PIPELINE_URL',
      jobUrl: 'CI_JOB_URL',
      version: 'env-ci (GitLab CI/CD)'
    })
    expect(ciMetadata(context)).toEqual({
      provider: 'gitlab',
      build_number: '1187',
      build_url: 'https://gitlab.example.com/acme/platform/shop/-/pipelines/1187',
      job_url: 'https://gitlab.example.com/acme/platform/shop/-/jobs/5521',
      branch: 'main'
    })
    // The CI named everything git could have told: git is never asked.
    expect(git.asked).toEqual([])
  })

  it('GitLab CI: a merge request ships its source branch, named by its number in the project', async () => {
    const context = await detectCiContext(
      {
        GITLAB_CI: 'true',
        CI_PROJECT_PATH: 'acme/shop',
        CI_PROJECT_URL: 'https://gitlab.com/acme/shop',
        CI_COMMIT_SHA: SHA,
        CI_COMMIT_REF_NAME: 'feature/cart',
        CI_PIPELINE_ID: '1190',
        CI_MERGE_REQUEST_ID: '98765432',
        CI_MERGE_REQUEST_IID: '42',
        CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'feature/cart',
        CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main'
      },
      '/builds/acme/shop',
      { git: fakeGit() }
    )
    expect(context).toMatchObject({ pullRequest: '42', branch: 'feature/cart' })
    expect(ciMetadata(context)).toMatchObject({ pull_request: '42', branch: 'feature/cart' })
  })

  it('GitLab CI: a tag pipeline names the tag, not a branch of the same name', async () => {
    const context = await detectCiContext(
      {
        GITLAB_CI: 'true',
        CI_PROJECT_PATH: 'acme/shop',
        CI_COMMIT_SHA: SHA,
        CI_COMMIT_TAG: 'v1.4.0',
        CI_COMMIT_REF_NAME: 'v1.4.0'
      },
      '/builds/acme/shop',
      { git: fakeGit({ 'symbolic-ref --short -q HEAD': 'main' }) }
    )
    expect(context.tag).toBe('v1.4.0')
    expect(context.branch).toBeUndefined()
  })

  it('GitHub Actions, in a run step: the actor, the run number and the link to the run', async () => {
    const env: Env = {
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_API_URL: 'https://api.github.com',
      GITHUB_REPOSITORY: 'acme/shop',
      GITHUB_SHA: SHA,
      GITHUB_REF: 'refs/heads/main',
      GITHUB_REF_NAME: 'main',
      GITHUB_REF_TYPE: 'branch',
      GITHUB_HEAD_REF: '',
      GITHUB_EVENT_NAME: 'push',
      GITHUB_EVENT_PATH: '/home/runner/work/_temp/_github_workflow/event.json',
      GITHUB_RUN_ID: '9876543210',
      GITHUB_RUN_NUMBER: '128',
      GITHUB_RUN_ATTEMPT: '1',
      GITHUB_ACTOR: 'octocat',
      GITHUB_WORKSPACE: '/home/runner/work/shop/shop',
      RUNNER_OS: 'Linux'
    }
    const context = await detectCiContext(env, '/home/runner/work/shop/shop', { git: fakeGit() })

    expect(fieldsOf(context)).toEqual({
      provider: 'github',
      version: SHA,
      service: 'acme/shop',
      user: 'octocat',
      branch: 'main',
      buildNumber: '128',
      buildUrl: 'https://github.com/acme/shop/actions/runs/9876543210',
      serverUrl: 'https://github.com'
    })
    expect(ciMetadata(context)).toEqual({
      provider: 'github',
      build_number: '128',
      build_url: 'https://github.com/acme/shop/actions/runs/9876543210',
      branch: 'main'
    })
  })

  it('GitHub Actions: a pull request names its number and head branch without reading the event file', async () => {
    const pullRequest = {
      GITHUB_ACTIONS: 'true',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_REPOSITORY: 'acme/shop',
      GITHUB_SHA: SHA,
      GITHUB_RUN_ID: '9876543211',
      GITHUB_ACTOR: 'octocat',
      GITHUB_HEAD_REF: 'feature/cart',
      GITHUB_BASE_REF: 'main',
      // Not there: env-ci would read it whole, and throw for pull_request_target.
      GITHUB_EVENT_PATH: join(tmpdir(), 'no-such-dir-for-ci-context', 'event.json')
    }
    const merge = await detectCiContext(
      { ...pullRequest, GITHUB_EVENT_NAME: 'pull_request', GITHUB_REF: 'refs/pull/42/merge' },
      '/w',
      { git: fakeGit() }
    )
    expect(merge).toMatchObject({ pullRequest: '42', branch: 'feature/cart' })

    const target = await detectCiContext(
      { ...pullRequest, GITHUB_EVENT_NAME: 'pull_request_target', GITHUB_REF: 'refs/heads/main' },
      '/w',
      { git: fakeGit() }
    )
    expect(target).toMatchObject({ provider: 'github', version: SHA, branch: 'feature/cart' })
  })

  it('GitHub Actions: a tag push names the tag', async () => {
    const context = await detectCiContext(
      {
        GITHUB_ACTIONS: 'true',
        GITHUB_REPOSITORY: 'acme/shop',
        GITHUB_SHA: SHA,
        GITHUB_REF: 'refs/tags/release/2.0',
        GITHUB_EVENT_NAME: 'push'
      },
      '/w',
      { git: fakeGit() }
    )
    expect(context.tag).toBe('release/2.0')
    expect(context.branch).toBeUndefined()
  })

  it('Jenkins: the build-user-vars login, the change branch, and the repository from the origin remote', async () => {
    const env: Env = {
      JENKINS_URL: 'https://jenkins.example.com/',
      JENKINS_HOME: '/var/lib/jenkins',
      BUILD_NUMBER: '57',
      BUILD_ID: '57',
      BUILD_URL: 'https://jenkins.example.com/job/shop/job/PR-42/57/',
      JOB_NAME: 'shop/PR-42',
      JOB_URL: 'https://jenkins.example.com/job/shop/job/PR-42/',
      WORKSPACE: '/var/lib/jenkins/workspace/shop_PR-42',
      BRANCH_NAME: 'PR-42',
      CHANGE_ID: '42',
      CHANGE_URL: 'https://github.com/acme/shop/pull/42',
      CHANGE_BRANCH: 'feature/cart',
      CHANGE_TARGET: 'main',
      CHANGE_AUTHOR: 'jdoe',
      GIT_COMMIT: SHA,
      GIT_PREVIOUS_SUCCESSFUL_COMMIT: PREVIOUS_PUSH,
      GIT_URL: 'https://github.com/acme/shop.git',
      BUILD_USER_ID: 'alice',
      BUILD_USER: 'Alice Martin'
    }
    const git = fakeGit({ 'remote get-url origin': 'https://github.com/acme/shop.git\n' })
    const context = await detectCiContext(env, '/var/lib/jenkins/workspace/shop_PR-42', { git })

    expect(fieldsOf(context)).toEqual({
      provider: 'jenkins',
      version: SHA,
      service: 'acme/shop',
      user: 'alice',
      branch: 'feature/cart',
      pullRequest: '42',
      buildNumber: '57',
      buildUrl: 'https://jenkins.example.com/job/shop/job/PR-42/57/',
      previousBuild: PREVIOUS_PUSH
    })
    expect(context.sources).toMatchObject({ service: 'the origin remote', user: 'BUILD_USER_ID' })
    expect(ciMetadata(context)).toEqual({
      provider: 'jenkins',
      build_number: '57',
      build_url: 'https://jenkins.example.com/job/shop/job/PR-42/57/',
      branch: 'feature/cart',
      pull_request: '42'
    })
  })

  it('Jenkins: without build-user-vars the change author; without GIT_COMMIT, HEAD through the bounded git', async () => {
    const git = fakeGit({ 'rev-parse HEAD': `${SHA}\n` })
    const context = await detectCiContext(
      {
        JENKINS_URL: 'https://jenkins.example.com/',
        BUILD_NUMBER: '58',
        BUILD_URL: 'https://jenkins.example.com/job/shop/job/PR-42/58/',
        BRANCH_NAME: 'PR-42',
        CHANGE_ID: '42',
        CHANGE_AUTHOR: 'jdoe'
      },
      process.cwd(),
      { git }
    )
    expect(context).toMatchObject({ user: 'jdoe', version: SHA })
    expect(context.sources.version).toBe('git rev-parse HEAD')
  })

  it('CircleCI: the username, the owner/repo and the link to the job', async () => {
    const env: Env = {
      CI: 'true',
      CIRCLECI: 'true',
      CIRCLE_BRANCH: 'main',
      CIRCLE_BUILD_NUM: '1234',
      CIRCLE_BUILD_URL: 'https://circleci.com/gh/acme/shop/1234',
      CIRCLE_JOB: 'deploy',
      CIRCLE_NODE_INDEX: '0',
      CIRCLE_NODE_TOTAL: '1',
      CIRCLE_PROJECT_USERNAME: 'acme',
      CIRCLE_PROJECT_REPONAME: 'shop',
      CIRCLE_REPOSITORY_URL: 'git@github.com:acme/shop.git',
      CIRCLE_SHA1: SHA,
      CIRCLE_USERNAME: 'jdoe',
      CIRCLE_WORKFLOW_ID: '5a1c3c4e-8d3e-4a57-9f5e-0b1f0c2c9f11',
      CIRCLE_WORKING_DIRECTORY: '~/project'
    }
    const context = await detectCiContext(env, '/home/circleci/project', { git: fakeGit() })

    expect(fieldsOf(context)).toEqual({
      provider: 'circleci',
      version: SHA,
      service: 'acme/shop',
      user: 'jdoe',
      branch: 'main',
      buildNumber: '1234',
      buildUrl: 'https://circleci.com/gh/acme/shop/1234'
    })
    expect(ciMetadata(context)).toEqual({
      provider: 'circleci',
      build_number: '1234',
      build_url: 'https://circleci.com/gh/acme/shop/1234',
      branch: 'main'
    })
  })

  it('CircleCI: a repository path env-ci built from a missing part is no path', async () => {
    const context = await detectCiContext(
      { CIRCLECI: 'true', CIRCLE_PROJECT_REPONAME: 'shop', CIRCLE_SHA1: SHA },
      '/home/circleci/project',
      { git: fakeGit({ 'remote get-url origin': 'git@github.com:acme/shop.git' }) }
    )
    // env-ci says "undefined/shop"; the checkout's origin says where it is.
    expect(context.service).toBe('acme/shop')
    expect(context.sources.service).toBe('the origin remote')
  })

  it('Buildkite: the build creator, the build and the job link (build URL # job id)', async () => {
    const env: Env = {
      CI: 'true',
      BUILDKITE: 'true',
      BUILDKITE_ORGANIZATION_SLUG: 'acme',
      BUILDKITE_PIPELINE_SLUG: 'shop',
      BUILDKITE_BRANCH: 'main',
      BUILDKITE_TAG: '',
      BUILDKITE_COMMIT: SHA,
      BUILDKITE_REPO: 'git@github.com:acme/shop.git',
      BUILDKITE_PULL_REQUEST: 'false',
      BUILDKITE_BUILD_ID: '0190a3c4-5c2f-4f5e-9d3a-6c1e2f3a4b5c',
      BUILDKITE_BUILD_NUMBER: '1514',
      BUILDKITE_BUILD_URL: 'https://buildkite.com/acme/shop/builds/1514',
      BUILDKITE_JOB_ID: '0190a3c4-6d1e-4b2a-8f3c-7e9d0a1b2c3d',
      BUILDKITE_BUILD_CREATOR: 'Keith Pitt',
      BUILDKITE_BUILD_CREATOR_EMAIL: 'keith@example.com',
      BUILDKITE_BUILD_CHECKOUT_PATH: '/var/lib/buildkite-agent/builds/agent-1/acme/shop'
    }
    // env-ci never sees BUILDKITE_REPO (it scans it in cubic time): the checkout's origin names it.
    const git = fakeGit({ 'remote get-url origin': 'git@github.com:acme/shop.git' })
    const context = await detectCiContext(env, env['BUILDKITE_BUILD_CHECKOUT_PATH'] as string, {
      git
    })
    const jobUrl =
      'https://buildkite.com/acme/shop/builds/1514#0190a3c4-6d1e-4b2a-8f3c-7e9d0a1b2c3d'

    expect(fieldsOf(context)).toEqual({
      provider: 'buildkite',
      version: SHA,
      service: 'acme/shop',
      user: 'Keith Pitt',
      branch: 'main',
      buildNumber: '1514',
      buildUrl: 'https://buildkite.com/acme/shop/builds/1514',
      jobUrl
    })
    expect(context.sources).toMatchObject({
      service: 'the origin remote',
      jobUrl: '$BUILDKITE_BUILD_URL#$BUILDKITE_JOB_ID'
    })
    expect(ciMetadata(context)).toEqual({
      provider: 'buildkite',
      build_number: '1514',
      build_url: 'https://buildkite.com/acme/shop/builds/1514',
      job_url: jobUrl,
      branch: 'main'
    })
    // The remote is read once, for its page and its path alike.
    expect(git.asked.filter(asked => asked === 'remote get-url origin')).toHaveLength(1)
  })

  it('Azure Pipelines, in a deployment job: the requester, the environment and the results page', async () => {
    const env: Env = {
      TF_BUILD: 'True',
      AGENT_ID: '12',
      BUILD_BUILDID: '4711',
      BUILD_BUILDNUMBER: '20250301.3',
      BUILD_BUILDURI: 'vstfs:///Build/Build/4711',
      BUILD_REPOSITORY_NAME: 'shop',
      BUILD_REPOSITORY_PROVIDER: 'TfsGit',
      BUILD_REPOSITORY_URI: 'https://acme@dev.azure.com/acme/Web%20Shop/_git/shop',
      BUILD_REPOSITORY_LOCALPATH: '/home/vsts/work/1/s',
      BUILD_REQUESTEDFOR: 'Jane Doe',
      BUILD_REQUESTEDFOREMAIL: 'jane@example.com',
      BUILD_SOURCEBRANCH: 'refs/heads/main',
      BUILD_SOURCEBRANCHNAME: 'main',
      BUILD_SOURCEVERSION: SHA,
      SYSTEM_COLLECTIONURI: 'https://dev.azure.com/acme/',
      SYSTEM_TEAMFOUNDATIONCOLLECTIONURI: 'https://dev.azure.com/acme/',
      SYSTEM_TEAMPROJECT: 'Web Shop',
      SYSTEM_JOBID: '7d2c6c1a-2b8d-5c0e-9f3a-1e4b6a8c0d2f',
      ENVIRONMENT_NAME: 'production',
      ENVIRONMENT_ID: '7'
    }
    // env-ci names no repository here: the checkout's origin does.
    const git = fakeGit({
      'remote get-url origin': 'https://acme@dev.azure.com/acme/Web%20Shop/_git/shop'
    })
    const context = await detectCiContext(env, '/home/vsts/work/1/s', { git })
    const buildUrl = 'https://dev.azure.com/acme/Web%20Shop/_build/results?buildId=4711'

    expect(fieldsOf(context)).toEqual({
      provider: 'azurePipelines',
      version: SHA,
      service: 'acme/Web Shop/_git/shop',
      user: 'Jane Doe',
      environment: 'production',
      branch: 'main',
      buildNumber: '20250301.3',
      buildUrl
    })
    expect(ciMetadata(context)).toEqual({
      provider: 'azurePipelines',
      build_number: '20250301.3',
      build_url: buildUrl,
      branch: 'main'
    })
  })

  it('Azure Pipelines: a tag build names the tag from its full ref', async () => {
    const context = await detectCiContext(
      { BUILD_BUILDURI: 'vstfs:///Build/Build/4712', BUILD_SOURCEBRANCH: 'refs/tags/v2.0.0' },
      '/home/vsts/work/1/s',
      { git: fakeGit() }
    )
    expect(context.tag).toBe('v2.0.0')
    expect(context.branch).toBeUndefined()
  })

  it('Bitbucket Pipelines, in a deployment step: the environment and the pipeline page; no user', async () => {
    const env: Env = {
      CI: 'true',
      BITBUCKET_BUILD_NUMBER: '321',
      BITBUCKET_COMMIT: SHA,
      BITBUCKET_BRANCH: 'main',
      BITBUCKET_WORKSPACE: 'acme',
      BITBUCKET_REPO_SLUG: 'shop',
      BITBUCKET_REPO_FULL_NAME: 'acme/shop',
      BITBUCKET_REPO_UUID: '{5c1e2f3a-4b5c-6d7e-8f90-a1b2c3d4e5f6}',
      BITBUCKET_GIT_HTTP_ORIGIN: 'http://bitbucket.org/acme/shop',
      BITBUCKET_GIT_SSH_ORIGIN: 'git@bitbucket.org:acme/shop.git',
      BITBUCKET_CLONE_DIR: '/opt/atlassian/pipelines/agent/build',
      BITBUCKET_PIPELINE_UUID: '{0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d}',
      BITBUCKET_STEP_UUID: '{1b2c3d4e-5f6a-7b8c-9d0e-1f2a3b4c5d6e}',
      BITBUCKET_STEP_TRIGGERER_UUID: '{2c3d4e5f-6a7b-8c9d-0e1f-2a3b4c5d6e7f}',
      BITBUCKET_DEPLOYMENT_ENVIRONMENT: 'production',
      BITBUCKET_DEPLOYMENT_ENVIRONMENT_UUID: '{3d4e5f6a-7b8c-9d0e-1f2a-3b4c5d6e7f80}',
      USER: 'root'
    }
    const context = await detectCiContext(env, '/opt/atlassian/pipelines/agent/build', {
      git: fakeGit()
    })

    // The account a CI's container runs as is nobody's name: a CI without a user variable has none.
    expect(fieldsOf(context)).toEqual({
      provider: 'bitbucket',
      version: SHA,
      service: 'acme/shop',
      environment: 'production',
      branch: 'main',
      buildNumber: '321',
      buildUrl: 'http://bitbucket.org/acme/shop/pipelines/results/321'
    })
    expect(ciMetadata(context)).toEqual({
      provider: 'bitbucket',
      build_number: '321',
      build_url: 'http://bitbucket.org/acme/shop/pipelines/results/321',
      branch: 'main'
    })
  })

  it('Bitbucket Pipelines: a pull request pipeline names the pull request', async () => {
    const context = await detectCiContext(
      {
        BITBUCKET_BUILD_NUMBER: '322',
        BITBUCKET_COMMIT: SHA,
        BITBUCKET_BRANCH: 'feature/cart',
        BITBUCKET_PR_ID: '17',
        BITBUCKET_PR_DESTINATION_BRANCH: 'main',
        BITBUCKET_REPO_FULL_NAME: 'acme/shop'
      },
      '/opt/atlassian/pipelines/agent/build',
      { git: fakeGit() }
    )
    expect(context).toMatchObject({ pullRequest: '17', branch: 'feature/cart' })
  })
})

describe('a CI variable’s repository path with "." or ".." segments', () => {
  it('is no service: one warning, and the next source names it', async () => {
    const git = fakeGit({ 'remote get-url origin': 'git@github.com:acme/shop.git' })
    const env = { GITHUB_ACTIONS: 'true', GITHUB_REPOSITORY: 'acme/../../evil', GITHUB_SHA: SHA }
    const context = await detectCiContext(env, '/w', { git })
    expect(context).toMatchObject({
      service: 'acme/shop',
      sources: { service: 'the origin remote' }
    })
    expect(context.warnings).toEqual([
      'Not taken as the service: the repository path from env-ci (GitHub Actions) has a "." or ".." segment.'
    ])
  })
})

describe('credentials and unsafe characters in what the CI or the checkout names', () => {
  it('keeps no user information of a link: a token in the user-name position is dropped', async () => {
    const env = {
      GITLAB_CI: 'true',
      CI_PROJECT_PATH: 'acme/shop',
      CI_COMMIT_SHA: SHA,
      CI_JOB_URL: 'https://glpat-TOKEN123@gitlab.example.com/acme/shop/-/jobs/9',
      CI_PIPELINE_URL: 'https://u:p4ss@gitlab.example.com/acme/shop/-/pipelines/7'
    }
    const context = await detectCiContext(env, '/b', { git: fakeGit() })
    expect(context.jobUrl).toBe('https://gitlab.example.com/acme/shop/-/jobs/9')
    expect(context.buildUrl).toBe('https://gitlab.example.com/acme/shop/-/pipelines/7')
    expect(JSON.stringify(ciDefaults(context, '/b'))).not.toMatch(/TOKEN123|p4ss/)
  })

  it('takes no service across an "@" (Netlify’s REPOSITORY_URL with credentials): one warning', async () => {
    const env = {
      NETLIFY: 'true',
      COMMIT_REF: SHA,
      REPOSITORY_URL: 'https://user:SECRET@git.example.com/repo'
    }
    const context = await detectCiContext(env, '/opt/build/repo', { git: fakeGit() })
    expect(context.service).toBe('repo')
    expect(JSON.stringify(context)).not.toContain('SECRET')
    expect(context.warnings).toEqual([
      'Not taken as the service: the repository path from env-ci (Netlify) holds an "@", which may follow credentials.'
    ])
  })

  it.each([
    ['an escape sequence', '%1b[31m'],
    ['a right-to-left override', '%e2%80%ae']
  ])('takes no service from a remote whose path holds %s: one warning', async (_, encoded) => {
    const git = fakeGit({ 'remote get-url origin': `https://github.com/acme/sh${encoded}op.git` })
    const context = await detectCiContext({}, '/w/shop', { git })
    expect(context).toMatchObject({ service: 'shop', sources: { service: 'the folder name' } })
    expect(context.warnings).toEqual([
      'Not taken as the service: the repository path from the origin remote holds a control, line-separating or bidirectional character.'
    ])
  })
})

describe('ciDefaults: where the run comes from, for OpenTelemetry’s names', () => {
  it('in a GitLab tag pipeline: the project’s page, the tag, the pipeline and the job with their pages and ids', async () => {
    const env = {
      GITLAB_CI: 'true',
      CI_SERVER_URL: 'https://gitlab.example.com',
      CI_PROJECT_URL: 'https://gitlab.example.com/acme/shop',
      CI_PROJECT_PATH: 'acme/shop',
      CI_COMMIT_SHA: SHA,
      CI_COMMIT_REF_NAME: 'v1.4.2',
      CI_COMMIT_TAG: 'v1.4.2',
      CI_PIPELINE_ID: '1187',
      CI_PIPELINE_NAME: 'Release',
      CI_PIPELINE_URL: 'https://gitlab.example.com/acme/shop/-/pipelines/1187',
      CI_JOB_ID: '5521',
      CI_JOB_NAME: 'deploy-production',
      CI_JOB_URL: 'https://gitlab.example.com/acme/shop/-/jobs/5521'
    }
    const context = await detectCiContext(env, '/builds/acme/shop', { git: fakeGit() })
    // The run's link is the pipeline, named as GitLab names it.
    expect(ciDefaults(context, '/builds').runLink).toEqual({
      text: 'Pipeline 1187',
      url: 'https://gitlab.example.com/acme/shop/-/pipelines/1187'
    })
    expect(ciDefaults(context, '/builds').pipeline).toEqual({
      repositoryUrl: 'https://gitlab.example.com/acme/shop',
      provider: 'gitlab',
      ref: { name: 'v1.4.2', type: 'tag' },
      name: 'Release',
      runId: '1187',
      runUrl: 'https://gitlab.example.com/acme/shop/-/pipelines/1187',
      task: 'deploy-production',
      taskId: '5521',
      taskUrl: 'https://gitlab.example.com/acme/shop/-/jobs/5521'
    })
  })

  it('outside any CI: the origin remote’s page without its credentials, and the branch; nothing empty', async () => {
    const git = fakeGit({
      'remote get-url origin': 'https://deploy:s3cret-pw@git.example.com/acme/shop.git',
      'symbolic-ref --short -q HEAD': 'main'
    })
    const run = ciDefaults(await detectCiContext({}, '/w/shop', { git }), '/w/shop')
    expect(run.pipeline).toEqual({
      repositoryUrl: 'https://git.example.com/acme/shop',
      ref: { name: 'main', type: 'branch' }
    })
    expect(JSON.stringify(run)).not.toContain('s3cret')
  })
})

describe('values from the environment', () => {
  const gitlab = { GITLAB_CI: 'true', CI_PROJECT_PATH: 'acme/shop', CI_COMMIT_SHA: SHA }

  it('drops a value holding a line break, and a blank one, as unknown', async () => {
    const context = await detectCiContext(
      {
        ...gitlab,
        GITLAB_USER_LOGIN: 'jdoe\nInjected: yes',
        CI_ENVIRONMENT_NAME: '   ',
        CI_JOB_URL: 'https://gitlab.com/acme/shop/-/jobs/1\u2028x'
      },
      '/builds/acme/shop',
      { git: fakeGit() }
    )
    expect([context.user, context.environment, context.jobUrl]).toEqual([
      undefined,
      undefined,
      undefined
    ])
    expect(context.sources).not.toHaveProperty('user')
  })

  it('keeps a branch with a line break from env-ci, which would throw on it: the CI is still named', async () => {
    const context = await detectCiContext(
      { GITHUB_ACTIONS: 'true', GITHUB_SHA: SHA, GITHUB_REF: 'refs/heads/main\nx' },
      '/w',
      { git: fakeGit() }
    )
    expect(context).toMatchObject({ provider: 'github', version: SHA })
    expect(context.branch).toBeUndefined()
  })

  it('reads no value past the bound (env-ci scans some in quadratic time): it is unknown', async () => {
    const netlify = { NETLIFY: 'true', COMMIT_REF: SHA, HEAD: 'main' }
    const long = `https://github.com/acme/${'a'.repeat(2000)}`
    // Read, it would name the repository acme/aaa…; unread, env-ci knows no repository (and fails).
    const context = await detectCiContext({ ...netlify, REPOSITORY_URL: long }, '/opt/build/repo', {
      git: fakeGit()
    })
    expect(context.service).toBe('repo')
    expect(
      (
        await detectCiContext({ ...gitlab, GITLAB_USER_LOGIN: 'j'.repeat(2000) }, '/b', {
          git: fakeGit()
        })
      ).user
    ).toBeUndefined()
  })

  it('never throws where env-ci does (Netlify without REPOSITORY_URL), nor takes the login', async () => {
    const context = await detectCiContext(
      { NETLIFY: 'true', COMMIT_REF: SHA, USER: 'root' },
      '/opt/build/repo',
      { git: fakeGit() }
    )
    expect(fieldsOf(context)).toEqual({ service: 'repo' })
  })

  it('trims a value', async () => {
    const context = await detectCiContext(
      { ...gitlab, GITLAB_USER_LOGIN: '  jdoe \n' },
      '/builds/acme/shop',
      { git: fakeGit() }
    )
    expect(context.user).toBe('jdoe')
  })
})

describe('outside any CI', () => {
  let root: string
  let checkout: string
  let folder: string
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()

  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'cta-ci-context-')))
    checkout = join(root, 'shop-checkout')
    folder = join(root, 'plain-folder')
    mkdirSync(checkout)
    mkdirSync(folder)
    git(checkout, 'init', '-q', '-b', 'main')
    git(
      checkout,
      '-c',
      'user.name=Test',
      '-c',
      'user.email=test@example.com',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'init'
    )
    git(checkout, 'remote', 'add', 'origin', 'https://user:pw@git.example.com/acme/shop.git')
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('in a git checkout: HEAD, the origin remote without its credentials, the branch and the login', async () => {
    const context = await detectCiContext({ USER: 'alice' }, checkout)

    expect(fieldsOf(context)).toEqual({
      version: git(checkout, 'rev-parse', 'HEAD'),
      service: 'acme/shop',
      user: 'alice',
      branch: 'main'
    })
    expect(context.sources).toEqual({
      version: 'git rev-parse HEAD',
      service: 'the origin remote',
      repositoryUrl: 'the origin remote',
      user: 'USER',
      branch: 'git symbolic-ref HEAD'
    })
    expect(context.repositoryUrl).toBe('https://git.example.com/acme/shop')
    expect(JSON.stringify(context)).not.toContain('pw')
    expect(ciMetadata(context)).toEqual({ branch: 'main' })
  })

  it('reads git only through the runner it is given: env-ci runs no git of its own', async () => {
    // In a real checkout, env-ci alone would have run git (unbounded) and found HEAD.
    expect((await detectCiContext({}, checkout, { git: fakeGit() })).version).toBeUndefined()
    expect(
      (
        await detectCiContext({ JENKINS_URL: 'https://jenkins.example.com/' }, checkout, {
          git: fakeGit()
        })
      ).version
    ).toBeUndefined()
  })

  it('in a folder that is no checkout: the folder name, and the login of the person running it', async () => {
    const context = await detectCiContext({}, folder)

    expect(fieldsOf(context)).toEqual({ service: 'plain-folder', user: userInfo().username })
    expect(context.sources).toEqual({ service: 'the folder name', user: 'the login' })
  })

  it('starts no git outside a checkout, and git inside one', async () => {
    // A git on PATH that notes each start.
    const bin = join(root, 'noting-bin')
    const noted = join(root, 'git-started')
    mkdirSync(bin)
    writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$@" >> '${noted}'\n`, { mode: 0o755 })
    await detectCiContext({ PATH: bin }, folder)
    expect(existsSync(noted)).toBe(false)
    await detectCiContext({ PATH: bin }, checkout)
    expect(readFileSync(noted, 'utf8')).toContain('rev-parse HEAD')
  })

  it('asks git nothing the user gave: a given service is not read from the top folder', async () => {
    const answers = { 'rev-parse HEAD': 'a'.repeat(40) }
    const asked = fakeGit(answers)
    await detectCiContext({}, checkout, { git: asked })
    expect(asked.asked).toContain('rev-parse --show-toplevel')
    const given = fakeGit(answers)
    await detectCiContext({}, checkout, { git: given, givenService: 'web' })
    expect(given.asked).not.toContain('rev-parse --show-toplevel')
    // HEAD is still read: it is the change's commit for OpenTelemetry's names.
    expect(given.asked).toContain('rev-parse HEAD')
  })

  it('in a CI env-ci does not know (CI=true): no provider, and not the login of its runner', async () => {
    const context = await detectCiContext({ CI: 'true', USER: 'root' }, folder)
    expect(fieldsOf(context)).toEqual({ service: 'plain-folder' })
  })

  it('in a checkout with no origin: the checkout folder name, from a folder inside it', async () => {
    const bare = join(root, 'no-origin')
    mkdirSync(join(bare, 'deploy'), { recursive: true })
    git(bare, 'init', '-q')
    expect(await detectCiContext({ USERNAME: 'bob' }, join(bare, 'deploy'))).toMatchObject({
      service: basename(bare),
      user: 'bob'
    })
  })

  it('stops reading what git prints at the bound: a remote URL past it is not read', async () => {
    const long = join(root, 'long-remote')
    mkdirSync(long)
    git(long, 'init', '-q')
    git(long, 'remote', 'add', 'origin', `https://git.example.com/acme/${'a'.repeat(70_000)}.git`)
    expect((await detectCiContext({}, long)).sources.service).toBe('the folder name')
  })

  /** A checkout whose git hangs: its config includes a FIFO that no one writes. */
  function hungCheckout(name: string): string {
    const hung = join(root, name)
    mkdirSync(hung)
    git(hung, 'init', '-q')
    execFileSync('mkfifo', [join(hung, 'fifo')])
    git(hung, 'config', 'include.path', join(hung, 'fifo'))
    return hung
  }

  it('stops git at its budget, even when git hangs on an include.path FIFO: the folder names the service', async () => {
    // Unstopped, this git would never answer, nor the detection end.
    const context = await detectCiContext({}, hungCheckout('hung'), { budgetMs: 300 })
    expect(context.sources).toMatchObject({ service: 'the folder name' })
    expect(context.version).toBeUndefined()
  })

  it('asks git nothing once the run is cancelled, however long its budget', async () => {
    const cancelled = AbortSignal.abort('SIGINT')
    const context = await detectCiContext({}, hungCheckout('cancelled'), {
      budgetMs: 3_600_000,
      signal: cancelled
    })
    expect(context.sources).toEqual({ service: 'the folder name', user: 'the login' })
  })

  it('reads the checkout it is given, whatever GIT_DIR the environment names', async () => {
    const other = join(root, 'other')
    mkdirSync(other)
    git(other, 'init', '-q', '-b', 'other')
    const context = await detectCiContext({ GIT_DIR: join(other, '.git') }, checkout)
    expect(context).toMatchObject({ version: git(checkout, 'rev-parse', 'HEAD'), branch: 'main' })
  })

  it('takes no service from a remote whose path, decoded, climbs out with "..": one warning', async () => {
    const climbing = join(root, 'climbing')
    mkdirSync(climbing)
    git(climbing, 'init', '-q')
    git(climbing, 'remote', 'add', 'origin', 'https://github.com/acme%2F..%2F..%2Fevil/x.git')
    const context = await detectCiContext({}, climbing)
    expect(context).toMatchObject({ service: 'climbing', sources: { service: 'the folder name' } })
    expect(context.warnings).toEqual([
      'Not taken as the service: the repository path from the origin remote has a "." or ".." segment.'
    ])
  })
})

describe('checkoutSource: what shipped, from the checkout and what the CI says', () => {
  let root: string
  let repo: TestRepository
  let shallow: string
  const commits: string[] = []
  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'cta-checkout-lookup-')))
    repo = new TestRepository(join(root, 'shop'), gitEnv(root))
    for (const n of [1, 2, 3]) commits.push(repo.commit(`Change ${n}`, { [`f${n}.txt`]: `${n}\n` }))
    const remote = 'https://gitlab-ci-token:s3cret@gitlab.example.com/acme/shop.git'
    repo.git(['remote', 'add', 'origin', remote])
    shallow = join(root, 'shallow')
    repo.git(['clone', '-q', '--depth', '1', `file://${repo.path}`, shallow])
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  const GITLAB: Env = {
    GITLAB_CI: 'true',
    CI_SERVER_URL: 'https://gitlab.example.com',
    CI_PROJECT_PATH: 'acme/shop'
  }
  const JENKINS: Env = { JENKINS_URL: 'https://jenkins.example.com/', BUILD_NUMBER: '7' }
  async function lookUp(env: Env, cwd: string, previousVersion?: string) {
    // A variable the CI set for its own git never reaches the lookup's.
    const door = { ...gitEnv(root), ...env, GIT_DIR: join(root, 'nowhere') }
    const ci = await detectCiContext(door, cwd)
    const source = checkoutSource(door, ci, cwd, { named: '--previous-version', previousVersion })
    return lookUpShipped(source, { version: commits[2] })
  }

  it('takes GitLab’s commit before the push, and links the compare on the CI’s own server', async () => {
    const found = await lookUp({ ...GITLAB, CI_COMMIT_BEFORE_SHA: commits[0] }, repo.path)
    expect(found.shipped).toMatchObject({
      source: 'previous-push',
      previousSha: commits[0],
      commitCount: 2,
      compareUrl: `https://gitlab.example.com/acme/shop/-/compare/${commits[0]}...${commits[2]}`
    })
    expect(JSON.stringify(found)).not.toContain('s3cret')
  })

  it('takes Jenkins’ previous successful commit, after --previous-version', async () => {
    const jenkins = { ...JENKINS, GIT_PREVIOUS_SUCCESSFUL_COMMIT: commits[1] }
    expect((await lookUp(jenkins, repo.path)).shipped).toMatchObject({
      source: 'previous-build',
      commitCount: 1
    })
    expect((await lookUp(jenkins, repo.path, commits[0])).shipped?.source).toBe('input')
  })

  it.each([
    [GITLAB, "set GIT_DEPTH: 0 in the job's variables"],
    [JENKINS, 'turn off "Shallow clone" in the job\'s Git clone behaviours']
  ])('names the setting of the CI it runs on for a shallow clone', async (ci, setting) => {
    const env = {
      ...ci,
      CI_COMMIT_BEFORE_SHA: commits[0],
      GIT_PREVIOUS_SUCCESSFUL_COMMIT: commits[0]
    }
    const { warning } = await lookUp(env, shallow)
    expect(warning).toContain(
      `the checkout is a shallow clone without the previous deploy ${commits[0]}: ${setting}.`
    )
  })
})
