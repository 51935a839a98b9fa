import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { githubRunner } from '../../src/action/runner.ts'
import { parseOutputFile } from '../support/run-action.ts'

let dir: string
const saved = { ...process.env }

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cta-runner-'))
  process.env['GITHUB_OUTPUT'] = join(dir, 'output')
  process.env['GITHUB_STEP_SUMMARY'] = join(dir, 'summary')
  writeFileSync(process.env['GITHUB_OUTPUT'], '')
  writeFileSync(process.env['GITHUB_STEP_SUMMARY'], '')
})
afterEach(() => {
  process.env = { ...saved }
  rmSync(dir, { recursive: true, force: true })
})

describe('githubRunner', () => {
  it('reads inputs the way the runner passes them', () => {
    process.env['INPUT_FAIL-ON-ERROR'] = '  true \n'
    expect(githubRunner.getInput('fail-on-error')).toBe('true')
    expect(githubRunner.getInput('missing')).toBe('')
  })

  it('writes outputs to the GITHUB_OUTPUT file, multi-line values included', () => {
    githubRunner.setOutput('change-id', 'c-1')
    githubRunner.setOutput('error', 'line one\nline two')
    const outputs = parseOutputFile(readFileSync(process.env['GITHUB_OUTPUT'] ?? '', 'utf8'))
    expect(outputs).toEqual({ 'change-id': 'c-1', error: 'line one\nline two' })
  })

  it('writes a large JSON array output line by line, and it still parses as one array', () => {
    const ids = Array.from({ length: 2500 }, (_, i) => `evt-${i}`)
    const lines = [0, 1000, 2000].map(
      (start, i, starts) =>
        `${i === 0 ? '[' : ''}${ids
          .slice(start, start + 1000)
          .map(id => JSON.stringify(id))
          .join(',')}${i === starts.length - 1 ? ']' : ','}`
    )
    githubRunner.setOutputLines('event-ids', lines)
    const text = readFileSync(process.env['GITHUB_OUTPUT'] ?? '', 'utf8')
    const outputs = parseOutputFile(text)
    expect(JSON.parse(outputs['event-ids'])).toEqual(ids)
    expect(outputs['event-ids'].split('\n')).toHaveLength(3)
  })

  it('appends markdown to the job summary file', async () => {
    await githubRunner.appendSummary('## One')
    await githubRunner.appendSummary('## Two')
    expect(readFileSync(process.env['GITHUB_STEP_SUMMARY'] ?? '', 'utf8')).toBe('## One\n## Two\n')
  })

  it('writes no summary, and does not fail, when the runner offers no summary file', async () => {
    delete process.env['GITHUB_STEP_SUMMARY']
    await expect(githubRunner.appendSummary('## One')).resolves.toBeUndefined()
  })

  it('hands a line-by-line output to core whole when there is no output file', () => {
    delete process.env['GITHUB_OUTPUT']
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true)
    try {
      githubRunner.setOutputLines('event-ids', ['["a",', '"b"]'])
      const printed = write.mock.calls.map(call => String(call[0])).join('')
      expect(printed).toContain('::set-output name=event-ids::["a",%0A"b"]')
    } finally {
      write.mockRestore()
    }
  })

  it('masks secrets and fails with an error command and exit code', () => {
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true)
    try {
      githubRunner.setSecret('s3cret')
      githubRunner.setFailed('it broke')
      const printed = write.mock.calls.map(call => String(call[0])).join('')
      expect(printed).toContain('::add-mask::s3cret')
      expect(printed).toContain('::error::it broke')
      expect(process.exitCode).toBe(1)
    } finally {
      write.mockRestore()
      process.exitCode = 0
    }
  })
})

describe('githubRunner.getIDToken', () => {
  it('closes its connection to a token endpoint that never answers, once its signal aborts', async () => {
    const stop = new AbortController()
    let closed!: Promise<void>
    const server = createServer(request => {
      // Holds the connection, never answering, and sees when the client closes it.
      closed = new Promise(done => request.socket.on('close', () => done()))
      stop.abort()
    })
    await new Promise<void>(done => server.listen(0, '127.0.0.1', done))
    const { port } = server.address() as AddressInfo
    process.env['ACTIONS_ID_TOKEN_REQUEST_URL'] = `http://127.0.0.1:${port}/token?api-version=2.0`
    process.env['ACTIONS_ID_TOKEN_REQUEST_TOKEN'] = 'request-token'
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true)
    try {
      await expect(githubRunner.getIDToken('an-audience', stop.signal)).rejects.toThrow()
      await closed
    } finally {
      write.mockRestore()
      server.closeAllConnections()
      server.close()
    }
  })
})
