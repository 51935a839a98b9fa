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
    expect(runner.summary).toContain('| Field | Value |')
    expect(runner.summary).toContain('| Id | c-1 |')
    expect(runner.summary).not.toContain('Environment')
    expect(runner.summary).toContain('a &#124; b &lt;script&gt;')
  })

  it('redacts a cell before escaping and cutting it, so no form of the key survives', async () => {
    const runner = new FakeRunner()
    const redactor = new Redactor()
    const key = 'sk_live_' + 'a_b'.repeat(200)
    redactor.add(key)
    const report = new Report(runner, redactor)
    report.table('Change', [
      ['Description', `echo ${key}`],
      ['Id', key]
    ])
    await report.finish({ policy: 'auto', jobSummary: true })
    expect(runner.summary).not.toContain('sk\\_live')
    expect(runner.summary).not.toContain('a\\_b')
    expect(runner.summary).toContain('| Description | echo \\*\\*\\* |')
  })

  it('links only http(s) URLs, with the characters that could end the link encoded', async () => {
    const { runner, report } = setup()
    report.table('Links', [
      ['Run', { text: 'run', url: 'https://github.com/o/r/actions/runs/1)[x](javascript:y' }],
      ['Bad', { text: 'click', url: 'javascript:alert(1)' }]
    ])
    await report.finish({ policy: 'auto', jobSummary: true })
    expect(runner.summary).toContain(
      '[run](https://github.com/o/r/actions/runs/1%29%5Bx%5D%28javascript:y)'
    )
    expect(runner.summary).toContain('| Bad | click |')
  })
})

describe('the one way out', () => {
  const hostile = 'sig1\n::warning::pwned\r::add-mask::octocat\u001b[31m\u202eevil'

  it('makes outside text inert in logs, annotations, outputs and the summary', async () => {
    const { runner, report } = setup()
    report.info(hostile)
    report.notice(hostile)
    report.warning(hostile)
    report.output('change-id', hostile)
    report.table('T', [['Id', hostile]])
    await report.finish({ error: new Error(hostile), policy: 'auto', jobSummary: true })
    for (const text of runner.everything().split('\n')) {
      expect(text).not.toMatch(/^\s*::/)
    }
    const all = runner.everything()
    // No control character but the line breaks between entries, no bidi override.
    expect(all).not.toMatch(/[^\P{Cc}\n\t]|\u202e/u)
    expect(runner.outputs['change-id']).toBe(
      'sig1\\n::warning::pwned\\r::add-mask::octocat\\u001b[31m\\u202eevil'
    )
  })

  it('never lets a log line begin like a workflow command', () => {
    const { runner, report } = setup()
    report.info('::stop-commands::tok')
    expect(runner.lines[0]).toBe('\\u003a:stop-commands::tok')
  })
})

describe('Report.cancel', () => {
  it('says the run was cancelled and what may already be recorded, in the output, a warning and the summary', async () => {
    const { runner, report } = setup()
    await report.cancel('SIGTERM', 'A change (POST /v2/change)', true)
    expect(runner.outputs['error']).toMatch(/cancelled \(SIGTERM\).*may already have been recorded/)
    expect(runner.warnings[0]).toBe(runner.outputs['error'])
    expect(runner.summary).toContain('## Cancelled')
  })
})

describe('escapeCell', () => {
  it('keeps one line and cuts long text without splitting an emoji', () => {
    expect(escapeCell('a\nb')).toBe('a b')
    const long = '🚀'.repeat(600)
    const cut = escapeCell(long)
    expect(cut.endsWith('…')).toBe(true)
    expect(Array.from(cut).length).toBe(500)
  })
})
