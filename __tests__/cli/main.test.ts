/**
 * The command line in process, against the emulator, in a GitLab job's real checkout: what shipped
 * is read from the history (since the previous push, or in a tag pipeline since the previous tag),
 * sent under custom_metadata.git beside the CI's own `ci`, and hostile history and CI variables
 * stay inert on standard error, in --json, and in the --outputs and --summary files.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Emulator } from '../../emulator/emulator.ts'
import { main } from '../../src/cli/main.ts'
import { gitlabJob } from '../../scripts/run-bundled-action.ts'
import { gitEnv, TestRepository } from '../support/git-repository.ts'
import { renderSummary } from '../support/summary.ts'
import { useEmulator } from '../support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})

const HOSTILE =
  'Fix ::error::x\u2028::warning::y\u0007 [x](https://evil.example) <b>b</b>\u001b[31m'
const HOSTILE_PATH = 'hostile/\u0007bell\n::error::line\u2028[x](evil.example).txt'
/** A control character other than a line break, or a Unicode line or paragraph separator. */
const UNSAFE = /[^\P{Cc}\n]|[\u2028\u2029]/u

let root: string
let repo: TestRepository
let first: string
let head: string
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'cta-cli-main-')))
  repo = new TestRepository(join(root, 'shop'), gitEnv(root))
  first = repo.commit('Initial commit', { 'README.md': '# Shop\n' })
  repo.commit('Add the orders table', { 'db/migrations/002_orders.sql': 'create;\n' })
  head = repo.commit(`${HOSTILE}\n\n::set-output name=x::y`, { [HOSTILE_PATH]: 'x\n' }, HOSTILE)
  repo.git([
    'remote',
    'add',
    'origin',
    'https://gitlab-ci-token:s3cret@gitlab.example.com/acme/shop'
  ])
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('change-tracking change, in a GitLab job’s checkout', () => {
  it('sends what shipped under git, the CI’s fields under ci, and keeps hostile history inert', async () => {
    const stderr: string[] = []
    let stdout = ''
    const files = { outputs: join(root, 'outputs.env'), summary: join(root, 'summary.md') }
    const env = {
      ...gitEnv(root),
      GITLAB_CI: 'true',
      CI_SERVER_URL: 'https://gitlab.example.com',
      CI_PROJECT_PATH: 'acme/shop',
      CI_COMMIT_SHA: head,
      CI_COMMIT_BEFORE_SHA: first,
      CI_PIPELINE_ID: '42',
      CHANGE_TRACKING_API_KEY: emulator.apiKey
    }
    const args = ['change', '--base-url', emulator.url, '--json', '--outputs', files.outputs]
    const status = await main(
      [
        ...args,
        '--summary',
        files.summary,
        '--risk-paths',
        'migration: db/**\nhostile: hostile/**'
      ],
      env,
      {
        stdout: text => {
          stdout += text
        },
        stderr: line => stderr.push(line),
        cwd: repo.path
      }
    )
    expect(status).toBe(0)
    const [change] = [...emulator.changes.values()]
    const metadata = JSON.parse(String(change.custom_metadata)) as Record<string, object>
    expect(metadata['ci']).toEqual({ provider: 'gitlab', build_number: '42', branch: 'main' })
    expect(metadata['git']).toMatchObject({
      source: 'git',
      previous_push_sha: first,
      commit_count: 2,
      compare_url: `https://gitlab.example.com/acme/shop/-/compare/${first}...${head}`,
      risk: { migration: ['db/migrations/002_orders.sql'], hostile: [HOSTILE_PATH] }
    })
    expect(change.labels).toBe('risk:migration,risk:hostile')
    expect(stderr).toContain(
      `What the change ships: previous push ${first} (from previous-push), 2 commits, https://gitlab.example.com/acme/shop/-/compare/${first}...${head}, read from the checkout.`
    )

    const outputs = readFileSync(files.outputs, 'utf8')
    const summary = readFileSync(files.summary, 'utf8')
    expect(summary).toContain('::error&#58;:x') // the hostile commit is there, made inert
    for (const text of [...stderr, stdout, outputs, summary]) {
      expect(text).not.toMatch(UNSAFE)
      expect(text.split('\n').some(line => line.trimStart().startsWith('::'))).toBe(false)
      expect(text).not.toContain('s3cret')
    }
    expect(renderSummary(summary).links.filter(link => link.href.includes('evil'))).toEqual([])
  })
})

/** `change-tracking ARGS` in a GitLab job (gitlabJob), in `cwd`: its status and what it printed. */
async function inGitLabJob(args: string[], cwd: string, env: Record<string, string> = {}) {
  const stderr: string[] = []
  let stdout = ''
  const status = await main(
    args,
    {
      ...gitlabJob(),
      CHANGE_TRACKING_API_KEY: emulator.apiKey,
      CHANGE_TRACKING_BASE_URL: emulator.url,
      ...env
    },
    {
      stdout: text => {
        stdout += text
      },
      stderr: line => stderr.push(line),
      cwd
    }
  )
  return { status, stdout, stderr: stderr.join('\n') }
}

const metadataOf = (change: { custom_metadata?: unknown }) =>
  JSON.parse(String(change.custom_metadata)) as Record<string, Record<string, unknown>>

describe('change-tracking change, in a GitLab tag pipeline’s checkout', () => {
  it('records what shipped since the previous tag: the migration, the revert, and their labels', async () => {
    const tagged = new TestRepository(join(root, 'tagged'), gitEnv(root))
    tagged.commit('Initial commit', { 'README.md': '# Shop\n' })
    // The banner shipped with v1.0.0: its revert in v1.1.0 remediates it.
    const banner = tagged.commit('Show a banner (#13)', { 'web/banner.ts': 'export {}\n' })
    const start = banner
    tagged.dated(['tag', '-a', 'v1.0.0', '-m', 'v1.0.0'])
    tagged.commit('Add the orders table (#12)', { 'db/migrations/002_orders.sql': 'create;\n' })
    const reverted = tagged.dated(['revert', '--no-edit', banner])
    tagged.dated(['tag', '-a', 'v1.1.0', '-m', 'v1.1.0'])
    const origin = 'https://gitlab-ci-token:s3cret@gitlab.example.com/acme/shop.git'
    tagged.git(['remote', 'add', 'origin', origin])
    const run = await inGitLabJob(['change'], tagged.path, {
      ...gitEnv(root),
      CI_COMMIT_SHA: reverted,
      CI_COMMIT_TAG: 'v1.1.0',
      CI_SERVER_URL: 'https://gitlab.example.com'
    })
    expect(run.status).toBe(0)
    expect(run.stderr).toContain(`previous deploy ${start} (from previous-tag), 2 commits`)
    const [change] = [...emulator.changes.values()]
    expect(change.labels).toBe('remediation:revert,risk:migration')
    expect(metadataOf(change)['ci']).toMatchObject({ provider: 'gitlab', tag: 'v1.1.0' })
    expect(metadataOf(change)['git']).toMatchObject({
      source: 'git',
      previous_sha: start,
      commit_count: 2,
      compare_url: `https://gitlab.example.com/acme/shop/-/compare/${start}...${reverted}`,
      risk: { migration: ['db/migrations/002_orders.sql'] }
    })
    expect(metadataOf(change)['remediation']).toEqual({ type: 'revert', reverts: [banner] })
    expect(JSON.stringify(change) + run.stderr).not.toContain('s3cret')
  })
})

describe('change-tracking change, with hostile CI variables', () => {
  it('keeps hostile branch and user names inert in the summary file, the JSON and standard error', async () => {
    const GITLAB_HOSTILE_USER = '::warning::pwned [click](https://evil.example) **bold** ##[error]x'
    const work = mkdtempSync(join(root, 'work-'))
    const summary = join(work, 'hostile.md')
    const run = await inGitLabJob(['change', '--json', '--summary', summary], work, {
      CI_COMMIT_REF_NAME: 'main\u202e<img src=x onerror=alert(1)>',
      GITLAB_USER_LOGIN: GITLAB_HOSTILE_USER
    })
    expect(run.status).toBe(0)
    const [change] = [...emulator.changes.values()]
    expect(change.user).toBe(GITLAB_HOSTILE_USER)
    const written = readFileSync(summary, 'utf8')
    expect(written).not.toMatch(/<img|\]\(https:\/\/evil|\*\*bold|\u202e/)
    expect(JSON.parse(run.stdout)).toMatchObject({ 'change-id': change.id })
    for (const line of run.stderr.split(/\r?\n|\r/)) expect(line).not.toMatch(/^\s*::|##\[/)
  })
})

describe('a signal before the run begins', () => {
  it('while the key file is read (a FIFO nobody writes): one line, nothing sent, exit 143', async () => {
    const work = mkdtempSync(join(root, 'fifo-'))
    const fifo = join(work, 'key')
    execFileSync('mkfifo', [fifo])
    const stderr: string[] = []
    const env = { CHANGE_TRACKING_BASE_URL: emulator.url, CHANGE_TRACKING_SERVICE: 'shop' }
    const io = { stdout: () => {}, stderr: (line: string) => stderr.push(line), cwd: work }
    const status = main(['run', '--api-key-file', fifo, '--', 'true'], env, io)
    // Once the command line listens for signals (it reads the key file), a runner's SIGTERM.
    await new Promise(resolve => setImmediate(resolve))
    process.emit('SIGTERM', 'SIGTERM')
    expect(await status).toBe(143)
    expect(stderr).toEqual([
      'warning: Nothing was run or recorded: SIGTERM arrived before the run began.'
    ])
    expect(emulator.requests).toEqual([])
  })
})

describe('what a newcomer reads', () => {
  const work = () => mkdtempSync(join(root, 'newcomer-'))

  it('under auto, after a deploy that ran unrecorded, says last why it was not recorded and how to pass', async () => {
    const run = await inGitLabJob(['run', '--', 'sh', '-c', 'echo deployed'], work(), {
      CHANGE_TRACKING_API_KEY: 'not-the-key'
    })
    expect(run.status).toBe(1)
    const last = run.stderr.split('\n').at(-1)
    expect(last).toMatch(
      /^error: The deploy ran, unrecorded: GET \/v2\/hello was rejected with HTTP 401/
    )
    expect(last).toMatch(/To run it unrecorded without failing, give --fail-on-error false\.$/)
  })

  it('names -- when run is given no deploy command, and says a deploy that cannot start recorded nothing', async () => {
    const bare = await inGitLabJob(['run'], work())
    expect(bare.status).toBe(2)
    expect(bare.stderr).toBe(
      'error: run needs the deploy command after --, as in: change-tracking run -- ./deploy.sh production'
    )
    const missing = await inGitLabJob(['run', '--', 'change-tracking-no-such-deploy'], work())
    expect(missing.status).toBe(127)
    expect(missing.stderr).toMatch(
      /^error: The deploy command "change-tracking-no-such-deploy" was not found: give its path, or add its folder to PATH\. Nothing was recorded: the deploy did not start\.$/m
    )
  })

  it('says a suggestion on a line of its own, never as a literal \\n', async () => {
    const typo = await inGitLabJob(['change', '--enviroment', 'prod'], work())
    expect(typo.status).toBe(2)
    expect(typo.stderr.split('\n')).toEqual([
      "error: unknown option '--enviroment'",
      '(Did you mean --environment?)'
    ])
  })

  it('prints a change read back for a person, and in --json as an object with its metadata parsed', async () => {
    const recorded = await inGitLabJob(
      ['change', '--json', '--custom-metadata', '{"ticket":"OPS-1"}'],
      work()
    )
    const { 'change-id': id } = JSON.parse(recorded.stdout.trim().split('\n').at(-1) ?? '{}')
    const read = await inGitLabJob(['get-change', '--change-id', id], work())
    expect(read.status).toBe(0)
    expect(read.stdout).toContain(`id: ${id}\n`)
    expect(read.stdout).toContain('service: acme/shop\n')
    expect(read.stdout).toMatch(/custom_metadata:\n\{\n {2}"ci": \{/)
    expect(read.stdout).toContain('"ticket": "OPS-1"')
    const json = await inGitLabJob(['get-change', '--change-id', id, '--json'], work())
    const { change } = JSON.parse(json.stdout) as { change: Record<string, unknown> }
    expect(change).toMatchObject({ id, service: 'acme/shop', custom_metadata: { ticket: 'OPS-1' } })
  })
})
