/**
 * The CDEvent as each door hands it on, against the emulator: the action's `cdevent` output when it
 * records in the step itself (none at the job's end, when no later step could read it), and the
 * command line's --cdevent FILE, one line per service, removed when the deploy failed.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Emulator } from '../emulator/emulator.ts'
import type { CdEvent } from '../src/cdevent.ts'
import { main } from '../src/cli/main.ts'
import { run, runPost } from '../src/main.ts'
import { FakeRunner } from './support/fake-runner.ts'
import { runnerContext } from './support/run-action.ts'
import { useEmulator } from './support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})

const PUSH_ENV = { ...runnerContext(tmpdir()), GITHUB_EVENT_NAME: 'push' }
const SHA = '3f786850e387550fdab836ed7e6dc881de23001b'

function runner(inputs: Record<string, string> = {}): FakeRunner {
  return new FakeRunner({
    'api-key': emulator.apiKey,
    'base-url': emulator.url,
    'max-attempts': '1',
    'include-commits': 'false',
    environment: 'production',
    ...inputs
  })
}

describe('the action', () => {
  it('sets cdevent to the recorded change as service.deployed', async () => {
    const r = runner()
    await run(r, PUSH_ENV)
    expect(r.failures).toEqual([])
    const event = JSON.parse(r.outputs['cdevent']) as CdEvent
    expect(event.context).toMatchObject({
      specversion: '0.5.1',
      id: r.outputs['change-id'],
      type: 'dev.cdevents.service.deployed.0.3.0',
      source: 'https://github.com/octo-org/octo-repo/actions/runs/9876543210/attempts/1'
    })
    expect(event.subject).toMatchObject({
      id: 'octo-org/octo-repo',
      content: { environment: { id: 'production' } }
    })
  })

  it('sets none at the job end, and records a failed deploy as failed in otel', async () => {
    const r = runner({ 'record-at': 'job-end', 'job-status': 'failure' })
    await runPost({}, r, PUSH_ENV)
    expect(r.failures).toEqual([])
    expect(r.outputs).not.toHaveProperty('cdevent')
    const requests = emulator.requestsTo('POST /v2/change')
    const body = JSON.parse(requests[requests.length - 1].body) as { custom_metadata: string }
    const { otel } = JSON.parse(body.custom_metadata) as { otel: { attributes: object } }
    expect(otel.attributes).toMatchObject({
      'deployment.status': 'failed',
      'cicd.pipeline.result': 'failure'
    })
  })

  it('warns once that an image without a digest has no purl, and records its reference', async () => {
    const r = runner({ artifact: 'nginx:1.27' })
    await run(r, PUSH_ENV)
    expect(r.warnings).toEqual([
      'The artifact docker.io/library/nginx:1.27 has no digest: a tag can move, only a digest pins an image, so it has no purl.'
    ])
    const event = JSON.parse(r.outputs['cdevent']) as CdEvent
    expect(event.subject.content.artifactId).toMatch(/^pkg:github\/octo-org\/octo-repo@/)
  })

  it('sets it empty, saying why, without an environment', async () => {
    const r = runner({ environment: '' })
    await run(r, PUSH_ENV)
    expect(r.outputs['cdevent']).toBe('')
    expect(r.lines).toContain('No CDEvent: the change has no environment.')
  })
})

describe('change-tracking --cdevent FILE', () => {
  let root: string
  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'cta-cdevent-')))
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  const env = () => ({
    GITLAB_CI: 'true',
    CI_SERVER_URL: 'https://gitlab.example.com',
    CI_PROJECT_URL: 'https://gitlab.example.com/acme/shop',
    CI_PROJECT_PATH: 'acme/shop',
    CI_COMMIT_SHA: SHA,
    CI_PIPELINE_URL: 'https://gitlab.example.com/acme/shop/-/pipelines/7',
    CI_ENVIRONMENT_NAME: 'production',
    CHANGE_TRACKING_API_KEY: emulator.apiKey,
    CHANGE_TRACKING_INCLUDE_COMMITS: 'false'
  })
  async function cli(args: string[]) {
    const stderr: string[] = []
    const io = { stdout: () => {}, stderr: (line: string) => stderr.push(line), cwd: root }
    const status = await main([args[0], '--base-url', emulator.url, ...args.slice(1)], env(), io)
    return { status, stderr }
  }

  it('writes one event per line, one per service recorded', async () => {
    const file = join(root, 'events.ndjson')
    const { status } = await cli(['change', '--services', 'web\napi', '--cdevent', file])
    expect(status).toBe(0)
    const lines = readFileSync(file, 'utf8').split('\n')
    expect(lines.pop()).toBe('')
    const events = lines.map(line => JSON.parse(line) as CdEvent)
    expect(events.map(event => event.subject.id).sort()).toEqual(['api', 'web'])
    for (const event of events) {
      expect(event.context.source).toBe('https://gitlab.example.com/acme/shop/-/pipelines/7')
      expect(event.subject.source).toBe('https://gitlab.example.com/acme/shop')
      expect(event.subject.content.artifactId).toMatch(/^pkg:generic\/(web|api)@3f78/)
    }
  })

  it('after a failed deploy removes an earlier file and says why in one line', async () => {
    const file = join(root, 'failed.ndjson')
    writeFileSync(file, '{"an earlier":"event"}\n')
    const { status, stderr } = await cli(['run', '--cdevent', file, '--', 'sh', '-c', 'exit 3'])
    expect(status).toBe(3)
    expect(existsSync(file)).toBe(false)
    expect(stderr.filter(line => line.includes('CDEvent'))).toEqual([
      'No CDEvent: the deploy failed.'
    ])
  })

  it('when nothing was recorded removes the file too, saying so', async () => {
    const file = join(root, 'refused.ndjson')
    writeFileSync(file, '{}\n')
    const { stderr } = await cli(['change', '--artifact', 'nginx@sha512:x', '--cdevent', file])
    expect(existsSync(file)).toBe(false)
    expect(stderr.join('\n')).toContain('error: --artifact must name its digest')
    expect(stderr).toContain('warning: No CDEvent: no change was recorded.')
  })
})
