import { describe, expect, it } from '@jest/globals'
import { InputError, ServiceError } from '../src/errors.ts'
import { Redactor } from '../src/redact.ts'
import { Report, escapeCell, shouldFail } from '../src/report.ts'
import { FakeRunner } from './support/fake-runner.ts'

function setup() {
  const runner = new FakeRunner()
  const redactor = new Redactor()
  redactor.add('sekrit-key')
  return { runner, report: new Report(runner, redactor) }
}

const outage = new ServiceError('POST /v2/change failed: HTTP 503', {
  kind: 'outage',
  call: 'POST /v2/change',
  status: 503
})
const rejected = new ServiceError('POST /v2/change failed: HTTP 401', {
  kind: 'rejected',
  call: 'POST /v2/change',
  status: 401
})

describe('shouldFail', () => {
  it('under auto fails on what the user must fix and only warns on an outage', () => {
    expect(shouldFail('input', 'auto')).toBe(true)
    expect(shouldFail('rejected', 'auto')).toBe(true)
    expect(shouldFail('protocol', 'auto')).toBe(true)
    expect(shouldFail('outage', 'auto')).toBe(false)
  })
  it('true fails on everything and false on nothing', () => {
    for (const kind of ['input', 'rejected', 'protocol', 'outage'] as const) {
      expect(shouldFail(kind, 'true')).toBe(true)
      expect(shouldFail(kind, 'false')).toBe(false)
    }
  })
})

describe('Report.finish', () => {
  it('fails the step on a rejected call under auto, and still sets the error output', async () => {
    const { runner, report } = setup()
    await report.finish({ error: rejected, policy: 'auto', jobSummary: true })
    expect(runner.failures).toEqual([rejected.message])
    expect(runner.outputs['error']).toBe(rejected.message)
    expect(runner.summary).toContain('**Failed:**')
  })
  it('turns an outage into a warning under auto', async () => {
    const { runner, report } = setup()
    await report.finish({ error: outage, policy: 'auto', jobSummary: true })
    expect(runner.failures).toEqual([])
    expect(runner.warnings[0]).toContain('HTTP 503')
    expect(runner.warnings[0]).toContain('a service outage does not fail the step')
    expect(runner.outputs['error']).toBe(outage.message)
  })
  it('never fails under false, even for bad input', async () => {
    const { runner, report } = setup()
    const error = new InputError('api-key', 'Input "api-key" is required.')
    await report.finish({ error, policy: 'false', jobSummary: true })
    expect(runner.failures).toEqual([])
    expect(runner.warnings[0]).toContain('fail-on-error is false')
  })
  it('fails on anything unexpected rather than reporting success', async () => {
    const { runner, report } = setup()
    await report.finish({ error: new TypeError('boom'), policy: 'auto', jobSummary: true })
    expect(runner.failures).toEqual(['boom'])
  })
  it('writes no summary when job-summary is false', async () => {
    const { runner, report } = setup()
    report.table('Change recorded', [['Id', 'c-1']])
    await report.finish({ policy: 'auto', jobSummary: false })
    expect(runner.summary).toBe('')
  })
  it('redacts the key from outputs, logs, warnings and the summary', async () => {
    const { runner, report } = setup()
    report.output('change-id', 'id-sekrit-key')
    report.info('said sekrit-key')
    report.table('T', [['Key', 'sekrit-key']])
    const error = new ServiceError('HTTP 401: bad key sekrit-key', {
      kind: 'outage',
      call: 'GET /v2/hello'
    })
    await report.finish({ error, policy: 'auto', jobSummary: true })
    expect(runner.everything()).not.toContain('sekrit-key')
    expect(runner.outputs['change-id']).toBe('id-***')
  })
})

describe('Report.table', () => {
  it('leaves out rows without a value and escapes cells', async () => {
    const { runner, report } = setup()
    report.table('Change recorded', [
      ['Id', 'c-1'],
      ['Environment', undefined],
      ['Description', 'a | b <script>']
    ])
    await report.finish({ policy: 'auto', jobSummary: true })
    expect(runner.summary).toContain('| Id | c-1 |')
    expect(runner.summary).not.toContain('Environment')
    expect(runner.summary).toContain('a &#124; b &lt;script&gt;')
  })
})

describe('escapeCell', () => {
  it('keeps one line and cuts long text without splitting an emoji', () => {
    expect(escapeCell('a\nb')).toBe('a b')
    const long = '🚀'.repeat(600)
    const cut = escapeCell(long)
    expect(cut.endsWith('…')).toBe(true)
    expect(Array.from(cut).length).toBe(501)
  })
})
