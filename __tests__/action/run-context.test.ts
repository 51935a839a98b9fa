import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  MAX_EVENT_PAYLOAD_BYTES,
  readEventPayload,
  readRunContext
} from '../../src/action/run-context.ts'
import { contextDefaults as defaultsOfRun } from '../../src/action/defaults.ts'

const FIXTURES = new URL('../fixtures/payloads/', import.meta.url)
const REPOSITORY = 'octo-org/shop-api'
const MAIN_HEAD = 'd2c8cd8b80a5fed3756f3bc7dad08a59d76fbef6'

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Record<
    string,
    unknown
  >
}

function runEnv(eventName: string): Record<string, string> {
  return {
    GITHUB_EVENT_NAME: eventName,
    GITHUB_REPOSITORY: REPOSITORY,
    GITHUB_SHA: MAIN_HEAD,
    GITHUB_RUN_ID: '13901299999'
  }
}

describe('readEventPayload', () => {
  let directory: string
  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), 'context-test-'))
  })
  afterAll(() => {
    rmSync(directory, { recursive: true, force: true })
  })

  it('reads the JSON file at GITHUB_EVENT_PATH', () => {
    const path = join(directory, 'event.json')
    writeFileSync(path, JSON.stringify(fixture('release')))
    expect(readEventPayload(path)).toEqual({ payload: fixture('release') })
  })

  it('gives {} without a word when there is no event file', () => {
    expect(readEventPayload(undefined)).toEqual({ payload: {} })
    expect(readEventPayload('')).toEqual({ payload: {} })
  })

  it('gives {} and names the problem when the file does not exist or is a directory', () => {
    expect(readEventPayload(join(directory, 'missing.json'))).toEqual({
      payload: {},
      problem: 'could not be read (ENOENT)'
    })
    expect(readEventPayload(directory)).toEqual({
      payload: {},
      problem: 'could not be read (EISDIR)'
    })
  })

  it('gives {} and says so when the file is not JSON', () => {
    const path = join(directory, 'broken.json')
    writeFileSync(path, '{"action": "created",')
    expect(readEventPayload(path)).toEqual({ payload: {}, problem: 'is not JSON' })
  })

  it('refuses a file over 25 MiB without reading it', () => {
    const path = join(directory, 'huge.json')
    writeFileSync(path, '')
    truncateSync(path, MAX_EVENT_PAYLOAD_BYTES + 1)
    expect(readEventPayload(path)).toEqual({
      payload: {},
      problem: "is larger than 25 MiB, GitHub's own limit"
    })
  })

  it('reads a pipe only up to the bound', () => {
    // A FIFO has no size to check first: the read itself must stop at the bound.
    const path = join(directory, 'fifo.json')
    execFileSync('mkfifo', [path])
    const writer = spawn('sh', ['-c', `head -c ${MAX_EVENT_PAYLOAD_BYTES + 2} /dev/zero > ${path}`])
    try {
      expect(readEventPayload(path).problem).toBe("is larger than 25 MiB, GitHub's own limit")
    } finally {
      writer.kill()
    }
  })
})

describe('readRunContext', () => {
  it('reads the variables and the payload once, into a frozen context with the defaults of github.com', () => {
    const path = join(tmpdir(), `run-context-${process.pid}.json`)
    writeFileSync(path, JSON.stringify(fixture('push')))
    try {
      const { context, warning } = readRunContext({
        ...runEnv('push'),
        GITHUB_EVENT_PATH: path,
        GITHUB_SERVER_URL: ' '
      })
      expect(warning).toBeUndefined()
      expect(context).toMatchObject({
        eventName: 'push',
        repository: REPOSITORY,
        runId: '13901299999',
        serverUrl: 'https://github.com',
        apiUrl: 'https://api.github.com'
      })
      expect(context.payload).toEqual(fixture('push'))
      expect(Object.isFrozen(context)).toBe(true)
    } finally {
      rmSync(path, { force: true })
    }
  })

  it('gives the server and API roots without a trailing slash', () => {
    const { context } = readRunContext({
      GITHUB_SERVER_URL: 'https://ghe.example.com/',
      GITHUB_API_URL: 'https://ghe.example.com/api/v3//'
    })
    expect(context).toMatchObject({
      serverUrl: 'https://ghe.example.com',
      apiUrl: 'https://ghe.example.com/api/v3'
    })
  })

  it('warns once, naming the event payload, when it cannot be used, and goes on with the environment', () => {
    const { context, warning } = readRunContext({
      ...runEnv('push'),
      GITHUB_EVENT_PATH: join(tmpdir(), 'no-such-event-file.json')
    })
    expect(warning).toBe(
      "The event payload (GITHUB_EVENT_PATH) could not be read (ENOENT): it is ignored, and the change's defaults come from the runner's environment only."
    )
    expect(context.payload).toEqual({})
    expect(defaultsOfRun(context, '/work').version).toBe(MAIN_HEAD)
  })
})
