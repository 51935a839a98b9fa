import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AcceptedIds, newEventId } from '../src/events/events.ts'
import { githubRunner } from '../src/action/runner.ts'
import { parseOutputFile } from './support/run-action.ts'

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
    const accepted = new AcceptedIds()
    for (let start = 0; start < ids.length; start += 1000) {
      accepted.add(start, ids.slice(start, start + 1000))
    }
    githubRunner.setOutputLines('event-ids', accepted.jsonLines())
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

describe('AcceptedIds', () => {
  it('writes no ids as []', () => {
    expect([...new AcceptedIds().jsonLines()]).toEqual(['[]'])
  })
  it('keeps input order when batches are accepted out of order, and escapes ids', () => {
    const accepted = new AcceptedIds()
    accepted.add(2, ['c,d'])
    accepted.add(0, ['a"b', 'x'])
    expect(accepted.count).toBe(3)
    expect(accepted.toArray()).toEqual(['a"b', 'x', 'c,d'])
    expect(accepted.batches().map(batch => batch.firstPosition)).toEqual([0, 2])
  })
})

describe('newEventId', () => {
  it('makes distinct version 4 UUIDs', () => {
    const ids = Array.from({ length: 10_000 }, () => newEventId())
    for (const id of ids.slice(0, 500)) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    }
    expect(new Set(ids).size).toBe(ids.length)
  })
})
