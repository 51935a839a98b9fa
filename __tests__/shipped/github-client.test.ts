/**
 * The lookup's Octokit against the fake GitHub API: the headers it sends, the time budget that
 * ends a hung call and starts no other, the call bound, redirects never followed, GitHub's
 * answers as one sentence with no retry and no wait, a silent Octokit log, the API URLs the token
 * never goes to, and a toolkit that is loaded only for a call and holds no process open.
 */
import { describe, expect, it, jest } from '@jest/globals'
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GitHubFaults } from '../../emulator/github.ts'
import { testCertificate } from '../../emulator/tls.ts'
import { openGitHub, type GitHub } from '../../src/shipped/github-client.ts'
import {
  lookupOptions,
  REPOSITORY,
  TOKEN,
  useFakeGitHub,
  withGitHub as withFake
} from './fake-github.ts'

const fake = useFakeGitHub()
const RELEASES = `GET /repos/${REPOSITORY}/releases`
const advice = { tokenInput: 'github-token' }

function withGitHub<T>(
  options: { budgetMs?: number; maxCalls?: number },
  use: (github: GitHub) => Promise<T>
): Promise<T> {
  return withFake(fake(), use, options)
}

const [owner, repo] = REPOSITORY.split('/')
const listReleases = (github: GitHub) => github.octokit.rest.repos.listReleases({ owner, repo })

describe('each call', () => {
  it('sends the token in the Authorization header, with the API version', async () => {
    await withGitHub({}, listReleases)
    expect(fake().requests.map(request => request.headers)).toEqual([
      expect.objectContaining({
        authorization: `token ${TOKEN}`,
        'x-github-api-version': '2022-11-28'
      })
    ])
  })

  it('prints nothing of what GitHub says through Octokit’s log', async () => {
    fake().inject('GET /repos/*/*/releases', {
      status: 200,
      body: '[]',
      headers: {
        deprecation: 'true',
        sunset: 'outside text',
        link: '<https://x>; rel="deprecation"'
      }
    })
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      await withGitHub({}, listReleases)
      expect(warn).not.toHaveBeenCalled()
    } finally {
      warn.mockRestore()
    }
  })
})

describe('the time budget', () => {
  it('ends a hung call when it runs out, naming the call', async () => {
    fake().inject('GET /repos/*/*/releases', GitHubFaults.hang)
    await expect(withGitHub({ budgetMs: 100 }, listReleases)).rejects.toThrow(
      `the GitHub API did not answer ${RELEASES} within the lookup's time budget of 0.1 s`
    )
  })

  it('starts no call once it has run out', async () => {
    await withGitHub({ budgetMs: 20 }, async github => {
      await new Promise(resolve => github.signal.addEventListener('abort', resolve))
      await expect(listReleases(github)).rejects.toThrow('time budget of 0 s')
      expect(github.calls()).toBe(0)
    })
    expect(fake().requests).toEqual([])
  })
})

describe('the call bound', () => {
  it('makes no call past it', async () => {
    await withGitHub({ maxCalls: 2 }, async github => {
      await listReleases(github)
      await listReleases(github)
      await expect(listReleases(github)).rejects.toThrow(
        `${RELEASES} was not made: the lookup's call limit was reached`
      )
      expect(github.callsLeft()).toBe(0)
    })
    expect(fake().requests).toHaveLength(2)
  })
})

describe('answers that end a call', () => {
  it('never follows a redirect: the token stays with the API', async () => {
    fake().inject('GET /repos/*/*/releases', { redirect: `${fake().url}/repos/${REPOSITORY}/tags` })
    await expect(withGitHub({}, listReleases)).rejects.toThrow(
      `${RELEASES} answered a redirect (HTTP 302), which is never followed`
    )
    expect(fake().requests).toHaveLength(1)
  })

  it('names an HTML page instead of JSON by its content type', async () => {
    fake().inject('GET /repos/*/*/releases', GitHubFaults.html)
    await expect(withGitHub({}, listReleases)).rejects.toThrow(
      `${RELEASES} answered HTTP 200 with text/html, not JSON: check GITHUB_API_URL`
    )
  })

  it('names a reset connection by its code', async () => {
    fake().inject('GET /repos/*/*/releases', GitHubFaults.reset)
    await expect(withGitHub({}, listReleases)).rejects.toThrow(
      `${RELEASES} failed with UND_ERR_SOCKET: the GitHub API could not be reached`
    )
  })

  it.each([
    ['a used-up rate limit', { ...GitHubFaults.rateLimited, headers: { 'retry-after': '60' } }],
    ['a server error', GitHubFaults.badGateway]
  ])('is neither retried nor waited on after %s', async (_, fault) => {
    fake().inject('GET /repos/*/*/releases', fault)
    await expect(withGitHub({}, listReleases)).rejects.toThrow(`${RELEASES} answered HTTP`)
    expect(fake().requests).toHaveLength(1)
  })
})

describe('API URLs the token never goes to', () => {
  it.each([
    ['http://127.0.0.1:9/api/v3', 'GITHUB_API_URL uses http:, not https:'],
    ['https://user:pass@api.example', 'GITHUB_API_URL holds credentials'],
    ['api.github.com', 'GITHUB_API_URL is not a URL']
  ])('refuses %s before any call', async (apiUrl, reason) => {
    await expect(openGitHub({ apiUrl, token: TOKEN, advice })).rejects.toThrow(reason)
  })
})

describe('the process', () => {
  it('loads the toolkit only for a lookup with a token, and exits as soon as the lookup is done', async () => {
    fake().inject('GET /repos/*/*/compare/*', GitHubFaults.hang)
    const script = join(mkdtempSync(join(tmpdir(), 'cta-lookup-')), 'lookup.ts')
    const options = lookupOptions(fake(), { previousVersion: 'v1.0.0', budgetMs: 200 })
    writeFileSync(
      script,
      [
        `import { registerHooks } from 'node:module'`,
        `let loads = 0`,
        `registerHooks({ resolve(specifier, context, next) {`,
        `  if (specifier === '@actions/github') loads++`,
        `  return next(specifier, context)`,
        `} })`,
        `const { lookUpWithGitHub } = await import(${JSON.stringify(join(process.cwd(), 'src/shipped/github-lookup.ts'))})`,
        `const options = ${JSON.stringify(options)}`,
        `await lookUpWithGitHub({ ...options, token: '' })`,
        `const withoutCalls = loads`,
        `const { warning } = await lookUpWithGitHub(options)`,
        `console.log(JSON.stringify({ withoutCalls, loads, warning, at: Date.now() }))`
      ].join('\n')
    )
    const child = spawn(process.execPath, [script], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_EXTRA_CA_CERTS: (await testCertificate()).certPath
      },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    const exitedAt = await new Promise<number>(resolve =>
      child.on('exit', () => resolve(Date.now()))
    )
    const printed = JSON.parse(output) as {
      withoutCalls: number
      loads: number
      warning: string
      at: number
    }
    expect(printed).toMatchObject({ withoutCalls: 0, loads: 1 })
    expect(printed.warning).toContain("within the lookup's time budget of 0.2 s")
    // Nothing (a socket, a timer) holds the process once the lookup has returned.
    expect(exitedAt - printed.at).toBeLessThan(1000)
  })
})
