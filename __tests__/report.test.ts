/**
 * The report, through a door-neutral renderer: every line made safe on its one way out, the
 * dry-run printout, and `finish`: the result's outputs written, the error said by its ruling in
 * the door's words, the summary appended, a failure to report said by its own ruling, and the
 * rulings returned. The summary's markdown is summary.ts's (summary.test.ts); which verdict an
 * error gets is the policy's (policy.test.ts).
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { InputError, ServiceError } from '../src/errors.ts'
import { CancelledError, type Moment } from '../src/policy.ts'
import { Redactor } from '../src/redact.ts'
import { MAX_MESSAGE_CHARS, Report, type CommandResult, type StepOutcome } from '../src/report.ts'
import type { FailOnError } from '../src/settings.ts'
import { answer } from '../src/summary.ts'
import { anyCodePoint } from './support/hostile-text.ts'
import { Recorder, TEST_WORDS } from './support/recorder.ts'

const KEY = 'sekrit-key'

function setup(dryRun = false) {
  const recorder = new Recorder()
  const redactor = new Redactor()
  redactor.add(KEY)
  return { recorder, report: new Report(recorder, redactor, TEST_WORDS, dryRun) }
}

/** Ends a run as a door does: recording under auto, with a summary, unless told otherwise. */
function finish(
  report: Report,
  outcome: StepOutcome,
  {
    moment = 'recording',
    policy = 'auto',
    jobSummary = true
  }: { moment?: Moment; policy?: FailOnError; jobSummary?: boolean } = {}
) {
  return report.finish(outcome, { moment, policy, jobSummary })
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

/** What a command answers with when it recorded a change. */
const RECORDED: CommandResult = {
  title: { done: { subject: 'Change', outcome: 'recorded' } },
  sections: [{ table: 'Change', rows: [['Id', 'c-1']] }],
  outputs: { 'change-id': 'c-1' }
}

describe('finish: the outputs', () => {
  it('writes each output redacted and inert, never cut, and a list of lines one by one', async () => {
    const { recorder, report } = setup()
    const json = JSON.stringify({ ids: Array.from({ length: 2000 }, (_, i) => `event-${i}`) })
    function* ids() {
      yield '["e-1"]'
      yield `["e-2 ${KEY}"]`
    }
    const outputs = {
      'change-id': `id-${KEY}\n::warning::x`,
      'event-results': json,
      'event-ids': ids()
    }
    await finish(report, { result: { ...RECORDED, outputs } })
    expect(recorder.outputs).toEqual({
      'change-id': 'id-***\\n::warning::x',
      'event-results': json,
      'event-ids': '["e-1"]\n["e-2 ***"]'
    })
  })

  it('sets only the lookup’s in a dry run, and says that nothing was sent', async () => {
    const { recorder, report } = setup(true)
    const outputs = {
      'change-id': 'c-1',
      'event-ids': ['["e-1"]'],
      'compare-url': 'https://github.com/o/r/compare/a...b',
      'commit-count': '2'
    }
    await finish(report, { result: { ...RECORDED, outputs } })
    expect(recorder.outputs).toEqual({
      'compare-url': 'https://github.com/o/r/compare/a...b',
      'commit-count': '2'
    })
    expect(recorder.lines).toEqual(['Dry run: nothing was sent.'])
  })
})

describe('finish: the summary', () => {
  it('appends the result’s summary, redacted, with how the run ended', async () => {
    const { recorder, report } = setup()
    const result: CommandResult = {
      ...RECORDED,
      sections: [{ table: 'Change', rows: [['Description', `echo ${KEY}`]] }]
    }
    await finish(report, { result, error: new Error(`boom ${KEY}`) })
    expect(recorder.summary).toMatch(/^## Change recorded, then failed\n/)
    expect(recorder.summary).toContain('| Description | echo \\*\\*\\* |')
    expect(recorder.summary).toContain('**Failed:** boom \\*\\*\\*')
    expect(recorder.everything()).not.toContain(KEY)
  })

  it('appends none when job-summary is false, or when there is nothing to show', async () => {
    const off = setup()
    await finish(off.report, { result: RECORDED }, { jobSummary: false })
    expect(off.recorder.summary).toBe('')
    const empty = setup()
    await finish(empty.report, { result: { title: {}, sections: [], outputs: {} } })
    expect(empty.recorder.summary).toBe('')
  })

  it('says a dry run’s title in a dry run’s words', async () => {
    const { recorder, report } = setup(true)
    await finish(report, { result: RECORDED })
    expect(recorder.summary).toMatch(/^## Change not sent\n/)
  })
})

/**
 * Each way a ruling is said: which renderer call, and the door's words after the message (by the
 * verdict, before a deploy; why it does not fail, after). Which verdict an error gets is the
 * policy's, tested as its table in policy.test.ts.
 */
// prettier-ignore
const SAYINGS = [
  // a ruling that                          said as      the line                                          error     moment           mode
  ['a ruling that fails now',               'failures', rejected.message,                                  rejected, 'recording',     'auto'],
  ['a ruling that fails before a deploy',   'failures', `${outage.message}. (deploy not run)`,             outage,   'before-deploy', 'true'],
  ['a ruling that fails after a deploy',    'errors',   `${rejected.message}. (fails after the deploy)`,   rejected, 'before-deploy', 'auto'],
  ['a ruling that records after a deploy',  'warnings', `${outage.message}. (recorded after the deploy)`,  outage,   'before-deploy', 'auto'],
  ['a ruling that warns before a deploy',   'warnings', `${rejected.message}. (deploy unrecorded)`,        rejected, 'before-deploy', 'false'],
  ['a ruling that warns of an outage',      'warnings', `${outage.message}. (an outage)`,                  outage,   'recording',     'auto'],
  ['a ruling that warns under false',       'warnings', `${rejected.message}. (false)`,                    rejected, 'recording',     'false']
] as const

describe('finish: the error, said as its ruling has it, in the door’s words', () => {
  it('resolves with no ruling and says nothing when nothing went wrong', async () => {
    const { recorder, report } = setup()
    expect(await finish(report, { result: RECORDED })).toEqual([])
    expect([...recorder.failures, ...recorder.errors, ...recorder.warnings]).toEqual([])
    expect(recorder.outputs['error']).toBeUndefined()
  })

  it.each(SAYINGS)(
    'says %s through the renderer’s %s: "%s"',
    async (_, said, line, error, moment, policy) => {
      const { recorder, report } = setup()
      expect(await finish(report, { error }, { moment, policy })).toHaveLength(1)
      const { failures, errors, warnings } = recorder
      expect({ failures, errors, warnings }).toEqual({
        failures: [],
        errors: [],
        warnings: [],
        [said]: [line]
      })
      // The error output carries the message alone, whatever follows it.
      expect(recorder.outputs['error']).toBe(error.message)
    }
  )

  it('names an input as the door names it, and says a missing key in the door’s own sentence', async () => {
    const invalid = setup()
    await finish(invalid.report, { error: new InputError('labels', ' is invalid.') })
    expect(invalid.recorder.failures).toEqual(['<labels> is invalid.'])
    const missing = setup()
    const error = Object.assign(new InputError('api-key', ' is required.'), { missing: true })
    await finish(missing.report, { error })
    expect(missing.recorder.failures).toEqual([TEST_WORDS.missingKey])
    expect(missing.recorder.outputs['error']).toBe(TEST_WORDS.missingKey)
  })

  it('keeps what the command did beside its error: the outputs and the summary', async () => {
    const { recorder, report } = setup()
    await finish(report, { result: { ...RECORDED, error: outage }, error: outage })
    expect(recorder.outputs).toEqual({ 'change-id': 'c-1', error: outage.message })
    expect(recorder.summary).toContain('| Id | c-1 |')
  })
})

describe('finish: a cancel', () => {
  const change = { label: 'A change (POST /v2/change)', records: true }
  const hello = { label: 'GET /v2/hello', records: false }

  it('says the calls in flight and what may already be recorded, in the output, one line and the summary', async () => {
    const { recorder, report } = setup()
    const rulings = await finish(report, { error: new CancelledError('SIGTERM', [change]) })
    const said =
      'The run was cancelled (SIGTERM) before it finished. A change (POST /v2/change) was in flight, so it may already have been recorded.'
    expect(recorder.outputs['error']).toBe(said)
    expect(recorder.warnings).toEqual([said])
    expect(recorder.summary).toMatch(/^## Cancelled\n/)
    expect(recorder.summary).toContain('may already have been recorded')
    expect(rulings.map(ruling => ruling.trouble)).toEqual(['cancel'])
  })

  it('names a read in flight without saying anything may be recorded, and says when none was', async () => {
    const reading = setup()
    await finish(reading.report, { error: new CancelledError('SIGINT', [hello]) })
    expect(reading.recorder.outputs['error']).toMatch(
      /\(SIGINT\) before it finished\. GET \/v2\/hello was in flight\.$/
    )
    const idle = setup()
    await finish(idle.report, { error: new CancelledError('SIGINT', []) })
    expect(idle.recorder.outputs['error']).toMatch(/finished\. No request was in flight\.$/)
  })

  it('says a cancel that fails the run as the failure line, with no words after it', async () => {
    const { recorder, report } = setup()
    await finish(
      report,
      { error: new CancelledError('SIGINT', [hello, change]) },
      { policy: 'true' }
    )
    expect(recorder.failures).toEqual([
      'The run was cancelled (SIGINT) before it finished. GET /v2/hello and A change (POST /v2/change) was in flight, so it may already have been recorded.'
    ])
    expect(recorder.warnings).toEqual([])
  })
})

describe('finish: a failure to report, said by its own ruling', () => {
  /** A renderer that cannot write the change-id output (or any, with `all`), or the summary. */
  function refusing({ output = false, all = false, summary = false }) {
    const { recorder, report } = setup()
    const setOutput = recorder.setOutput.bind(recorder)
    recorder.setOutput = (name, value) => {
      if (all || (output && name === 'change-id'))
        throw new Error(`Missing file at path: /tmp/out-${KEY}`)
      setOutput(name, value)
    }
    if (summary) recorder.appendSummary = async () => Promise.reject(new Error('disk full'))
    return { recorder, report }
  }
  const unwritten = `The change-id output could not be written: Missing file at path: /tmp/out-***. ${TEST_WORDS.outputsAdvice}`

  it('says an output that cannot be written, redacted, as a warning under auto, and writes the rest', async () => {
    const { recorder, report } = refusing({ output: true })
    const rulings = await finish(report, {
      result: { ...RECORDED, outputs: { 'change-id': 'c-1', 'compare-url': 'u' } }
    })
    expect(recorder.warnings).toEqual([`${unwritten} (not reported)`])
    expect(recorder.outputs).toEqual({ 'compare-url': 'u', error: unwritten })
    expect(recorder.summary).toContain('| Id | c-1 |')
    expect(rulings.map(({ trouble, verdict }) => [trouble, verdict])).toEqual([
      ['unreported', 'warns']
    ])
  })

  it('says it as the failure line under true', async () => {
    const { recorder, report } = refusing({ output: true })
    await finish(report, { result: RECORDED }, { policy: 'true' })
    expect(recorder.failures).toEqual([unwritten])
  })

  it('says a summary that cannot be appended, by its own ruling', async () => {
    const { recorder, report } = refusing({ summary: true })
    await finish(report, { result: RECORDED }, { policy: 'false' })
    expect(recorder.warnings).toEqual(['Could not write the summary: disk full. (false)'])
  })

  it('keeps the run’s own error in the error output when an output cannot be written too', async () => {
    const { recorder, report } = refusing({ output: true })
    await finish(report, { result: RECORDED, error: rejected })
    expect(recorder.failures).toEqual([rejected.message])
    expect(recorder.warnings).toEqual([`${unwritten} (not reported)`])
    expect(recorder.outputs['error']).toBe(rejected.message)
  })

  it('says the error first, even where no output can be written, then each failure to report', async () => {
    const { recorder, report } = refusing({ all: true, summary: true })
    const rulings = await finish(report, { result: RECORDED, error: rejected })
    expect(recorder.failures).toEqual([rejected.message])
    expect(recorder.warnings).toEqual([
      `${unwritten} (not reported)`,
      'Could not write the summary: disk full. (not reported)'
    ])
    expect(rulings.map(ruling => ruling.trouble)).toEqual(['mistake', 'unreported', 'unreported'])
  })
})

describe('lines that tell an answer', () => {
  it('are left out of a dry run, which has no answers; other lines are said', () => {
    const dry = setup(true)
    dry.report.notice(answer('Recorded change c-1.'))
    dry.report.info(answer('Heartbeat received as signal s-1.'))
    dry.report.info('Matched 2 services.')
    expect(dry.recorder.everything()).not.toMatch(/c-1|s-1/)
    expect(dry.recorder.lines).toEqual(['Matched 2 services.'])
    const real = setup()
    real.report.notice(answer('Recorded change c-1.'))
    expect(real.recorder.notices).toEqual(['Recorded change c-1.'])
  })
})

describe('the one way out', () => {
  const hostile = 'sig1\n::warning::pwned\r::add-mask::octocat\u001b[31m\u202eevil'

  it('makes outside text inert in logs, annotations, outputs and the summary', async () => {
    const { recorder, report } = setup()
    report.info(hostile)
    report.notice(hostile)
    report.warning(hostile)
    report.debug(hostile)
    const result: CommandResult = {
      title: {},
      sections: [{ table: 'T', rows: [['Id', hostile]] }],
      outputs: { 'change-id': hostile }
    }
    await finish(report, { result, error: new Error(hostile) })
    for (const text of recorder.everything().split('\n')) {
      expect(text).not.toMatch(/^\s*::/)
    }
    // No control character but the line breaks between entries, no bidi override.
    expect(recorder.everything()).not.toMatch(/[^\P{Cc}\n\t]|\u202e/u)
    expect(recorder.outputs['change-id']).toBe(
      'sig1\\n::warning::pwned\\r::add-mask::octocat\\u001b[31m\\u202eevil'
    )
  })

  it('redacts the key from outputs, logs, annotations and the summary', async () => {
    const { recorder, report } = setup()
    report.info(`said ${KEY}`)
    report.debug(`debug ${KEY}`)
    const error = new ServiceError(`HTTP 401: bad key ${KEY}`, {
      kind: 'outage',
      call: 'GET /v2/hello'
    })
    const result: CommandResult = {
      title: {},
      sections: [{ table: 'T', rows: [['Key', KEY]] }],
      outputs: { 'change-id': `id-${KEY}` }
    }
    await finish(report, { result, error })
    expect(recorder.everything()).not.toContain(KEY)
    expect(recorder.outputs['change-id']).toBe('id-***')
  })

  it('never lets a log line begin like a workflow command', () => {
    const { recorder, report } = setup()
    report.info('::stop-commands::tok')
    expect(recorder.lines[0]).toBe('\\u003a:stop-commands::tok')
  })

  it('says a failure of the door’s own as the failure line, made safe', () => {
    const { recorder, report } = setup()
    report.failed(`The deploy command "x" was not found: ${hostile} ${KEY}`)
    expect(recorder.failures).toHaveLength(1)
    expect(recorder.failures[0]).not.toMatch(/[^\P{Cc}]|\u202e|sekrit/u)
  })
})

describe('the dry-run printout of a request', () => {
  const url = new URL('https://tracking.example/v2/change')
  const printed = (body: string, secret?: string): string => {
    const recorder = new Recorder()
    const redactor = new Redactor()
    if (secret) redactor.add(secret)
    const report = new Report(recorder, redactor, TEST_WORDS, true)
    report.printRequest({ method: 'POST', path: 'v2/change', body }, url)
    return recorder.lines.join('\n')
  }
  const key = 'Zq9-the-api-key-of-thirty-eight-chars'

  it('never shows part of a secret that the cut splits, wherever the cut falls in it', () => {
    for (let shift = 0; shift <= key.length; shift++) {
      const body = `${'x'.repeat(4000 - shift)}${key} and the rest`
      const shown = printed(body, key)
      for (let at = 0; at + 8 <= key.length; at++)
        expect(shown).not.toContain(key.slice(at, at + 8))
    }
  })

  it("never shows part of a URL's password that the cut splits", () => {
    const password = 'Zq9SuperSecretPassword'
    for (let shift = 0; shift <= 40; shift++) {
      const shown = printed(`${'x'.repeat(4000 - shift)}https://deploy:${password}@host/x`)
      for (let at = 0; at + 8 <= password.length; at++)
        expect(shown).not.toContain(password.slice(at, at + 8))
    }
  })

  it('never splits a character at the cut, and says how long the whole body is', () => {
    const body = `${'x'.repeat(3999)}${'😀'.repeat(10)}`
    const shown = printed(body)
    expect(shown).not.toContain('\ufffd')
    expect(shown).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/u)
    expect(shown).toContain(`… (${Buffer.byteLength(body)} bytes in all)`)
  })

  it('prints a short body whole, with no note of its length', () => {
    const shown = printed('{\n  "service": "api"\n}')
    expect(shown).toContain('  "service": "api"')
    expect(shown).not.toContain('bytes in all')
  })
})

/**
 * What @actions/core writes to stdout for each call: core.info writes the text and a line end;
 * an annotation is `::name::` and the data with `%`, `\r` and `\n` percent-escaped. Each write
 * is kept apart, so that an annotation's own prefix can be told from an injected one.
 */
class StdoutRunner extends Recorder {
  readonly writes: Array<{ annotation?: string; text: string }> = []

  override info(message: string): void {
    this.writes.push({ text: `${message}\n` })
  }
  override notice(message: string): void {
    this.annotate('notice', message)
  }
  override warning(message: string): void {
    this.annotate('warning', message)
  }
  override setFailed(message: string): void {
    this.annotate('error', message)
  }
  private annotate(name: string, message: string): void {
    const data = message.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
    this.writes.push({ annotation: name, text: `::${name}::${data}\n` })
  }
}

/** The runner reads its log line by line, ending a line at `\n`, `\r\n` or a bare `\r`. */
function runnerLines(text: string): string[] {
  return text.split(/\r\n|\n|\r/)
}

/** What .NET's String.TrimStart() removes: the whitespace of char.IsWhiteSpace. */
const DOTNET_WHITESPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*/

/** The runner's current parser: `::name …::data` once leading whitespace is trimmed. */
function commandV2(line: string): string | undefined {
  const trimmed = line.replace(DOTNET_WHITESPACE, '')
  if (!trimmed.startsWith('::')) return undefined
  const end = trimmed.indexOf('::', 2)
  if (end < 0) return undefined
  return trimmed.slice(2, end).split(' ')[0]
}

/** The runner's legacy parser: `##[name …]` anywhere in the line (every occurrence, to be strict). */
function legacyCommands(line: string): string[] {
  const found: string[] = []
  for (let at = line.indexOf('##['); at >= 0; at = line.indexOf('##[', at + 1)) {
    const close = line.indexOf(']', at + 3)
    if (close < 0) break
    const name = line.slice(at + 3, close).split(' ')[0]
    if (/^[a-z][a-z-]*$/i.test(name)) found.push(name)
  }
  return found
}

/** Outside text leaning towards what starts commands and lines. */
const commandish = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '##[',
        '##[set-output name=change-id;]pwned',
        '##[add-mask]',
        '##[warning]',
        ']',
        '#',
        '[',
        '::',
        '::warning::',
        '::add-mask::x',
        ':',
        '\r',
        '\n',
        '\r\n',
        '\u2028',
        '\u0085',
        '%0A',
        '%0D',
        '%25',
        ' ',
        '\t',
        '\u00a0',
        '\u3000'
      ),
      fc.string({ unit: anyCodePoint, maxLength: 8 })
    ),
    { maxLength: 12 }
  )
  .map(parts => parts.join(''))

describe('the one way out, as the runner reads it', () => {
  /** Every line the runner would read as a workflow command, but an annotation's own prefix. */
  function injectedCommands(runner: StdoutRunner): string[] {
    const injected: string[] = []
    for (const write of runner.writes) {
      runnerLines(write.text).forEach((line, index) => {
        const own = write.annotation !== undefined && index === 0
        const v2 = commandV2(line)
        if (v2 !== undefined && !(own && line.startsWith(`::${write.annotation}::`))) {
          injected.push(line)
        }
        if (legacyCommands(line).length > 0) injected.push(line)
      })
    }
    return injected
  }

  async function printEverywhere(text: string, policy: 'auto' | 'false'): Promise<StdoutRunner> {
    const runner = new StdoutRunner()
    const report = new Report(runner, new Redactor(), TEST_WORDS)
    report.info(text)
    report.notice(text)
    report.warning(text)
    report.printRequest(
      { method: 'POST', path: 'v2/change', body: text, contentType: 'application/json' },
      new URL('https://tracking.example/v2/change')
    )
    report.printRequest(
      { method: 'POST', path: 'v2/change', body: JSON.stringify({ description: text }) },
      new URL('https://tracking.example/v2/change')
    )
    await finish(report, { error: new Error(text) }, { policy, jobSummary: false })
    return runner
  }

  it('lets no outside text become a workflow command, in either syntax, on any line', async () => {
    await fc.assert(
      fc.asyncProperty(commandish, fc.constantFrom('auto', 'false'), async (text, policy) => {
        const runner = await printEverywhere(text, policy as 'auto' | 'false')
        expect(injectedCommands(runner)).toEqual([])
      }),
      { numRuns: 150 }
    )
  })

  it('breaks a legacy command in the middle of a heartbeat signal id or a commit message', async () => {
    const runner = new StdoutRunner()
    const report = new Report(runner, new Redactor(), TEST_WORDS)
    report.info('Heartbeat sent, received as signal sig-1 ##[set-output name=change-id;]pwned.')
    report.printRequest(
      {
        method: 'POST',
        path: 'v2/change',
        body: '{\n  "message": "Fix typo ##[set-output name=error;]x"\n}'
      },
      new URL('https://tracking.example/v2/change')
    )
    expect(injectedCommands(runner)).toEqual([])
    const printed = runner.writes.map(write => write.text).join('')
    // Still readable: the escape stands for the character it replaces.
    expect(printed).toContain('sig-1 #\\u0023[set-output name=change-id;]pwned.')
    expect(printed).toContain('"message": "Fix typo #\\u0023[set-output name=error;]x"')
  })

  it('never lets a line begin like a command after leading whitespace', () => {
    const { recorder, report } = setup()
    report.info(' \u3000::add-mask::x')
    expect(recorder.lines).toEqual([' \u3000\\u003a:add-mask::x'])
  })
})

describe('messages cut to MAX_MESSAGE_CHARS', () => {
  const huge = 'f'.repeat(100_000)
  const length = (text: string | undefined): number => Array.from(text ?? '').length

  it('cuts a 100 KB text in a log line, a notice, a warning, a debug line, the failure and the error output', async () => {
    const { recorder, report } = setup()
    report.info(`Heartbeat for ${huge}`)
    report.notice(huge)
    report.warning(`The pull request head ${huge} is not a commit SHA.`)
    report.debug(huge)
    await finish(report, { error: new Error(huge) }, { jobSummary: false })
    const { lines, notices, warnings, debugs, failures } = recorder
    const printed = [...lines, ...notices, ...warnings, ...debugs, ...failures]
    expect(printed).toHaveLength(5)
    for (const text of [...printed, recorder.outputs['error']]) {
      expect(length(text)).toBeLessThanOrEqual(MAX_MESSAGE_CHARS)
      expect(text?.endsWith('…')).toBe(true)
    }
  })

  it('keeps the door’s reason a long error does not fail the run whole', async () => {
    const { recorder, report } = setup()
    await finish(report, { error: new Error(huge) }, { policy: 'false', jobSummary: false })
    expect(length(recorder.warnings[0])).toBeLessThanOrEqual(MAX_MESSAGE_CHARS)
    expect(recorder.warnings[0]).toMatch(/… \(false\)$/)
  })

  it('cuts after redacting, so a secret across the cut leaves no part of itself', () => {
    const { recorder, report } = setup()
    const upToKey = 'x'.repeat(MAX_MESSAGE_CHARS - 4)
    report.warning(`${upToKey}${KEY} and more`)
    const warning = recorder.warnings[0] ?? ''
    expect(length(warning)).toBe(MAX_MESSAGE_CHARS)
    expect(warning.slice(upToKey.length)).toBe('***…')
  })
})
