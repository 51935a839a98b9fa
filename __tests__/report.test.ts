import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { micromark } from 'micromark'
import { gfm, gfmHtml } from 'micromark-extension-gfm'
import { InputError, ServiceError } from '../src/errors.ts'
import { Redactor } from '../src/redact.ts'
import { ACTION_NAME } from '../src/package.ts'
import { MAX_MESSAGE_CHARS, Report } from '../src/report.ts'
import { MAX_SUMMARY_CELL_CHARS, answer, escapeCell } from '../src/summary.ts'
import { FakeRunner } from './support/fake-runner.ts'
import { renderSummary } from './support/summary.ts'
import { anyCodePoint } from './support/hostile-text.ts'
import { ACTION_WORDS } from '../src/main.ts'

function setup() {
  const runner = new FakeRunner()
  const redactor = new Redactor()
  redactor.add('sekrit-key')
  return { runner, report: new Report(runner, redactor, ACTION_WORDS) }
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
    report.summary.table('Change recorded', [['Id', 'c-1']])
    await report.finish({ policy: 'auto', jobSummary: false })
    expect(runner.summary).toBe('')
  })
  it('redacts the key from outputs, logs, warnings and the summary', async () => {
    const { runner, report } = setup()
    report.output('change-id', 'id-sekrit-key')
    report.info('said sekrit-key')
    report.summary.table('T', [['Key', 'sekrit-key']])
    const error = new ServiceError('HTTP 401: bad key sekrit-key', {
      kind: 'outage',
      call: 'GET /v2/hello'
    })
    await report.finish({ error, policy: 'auto', jobSummary: true })
    expect(runner.everything()).not.toContain('sekrit-key')
    expect(runner.outputs['change-id']).toBe('id-***')
  })
})

describe('the summary’s title and order, as rendered', () => {
  async function rendered(act: (report: Report) => void, error?: unknown) {
    const { runner, report } = setup()
    act(report)
    await report.finish({ error, policy: 'auto', jobSummary: true })
    return renderSummary(runner.summary)
  }

  it('puts the lead right under the title, before the failure line and every other section', async () => {
    const { blocks } = await rendered(report => {
      report.summary.table('Change', [['Service', 'shop']])
      report.summary.lead('Deploy', [['Outcome', 'failure']])
      report.summary.note('Heartbeat not sent.')
    }, rejected)
    expect(blocks).toEqual([
      'Deploy',
      `Failed: ${rejected.message}`,
      'Change',
      'Heartbeat not sent.'
    ])
  })

  it('opens the title with how the deploy ended, then says what was done', async () => {
    const { title } = await rendered(report => {
      report.summary.openTitleWith('Deploy failed after 9 s')
      report.summary.setTitle('Change', 'recorded')
      report.summary.table('Change', [['Id', 'c-1']])
    })
    expect(title).toBe('Deploy failed after 9 s: change recorded')
  })

  it('says plainly what was not done and why', async () => {
    const plain = await rendered(
      report => report.summary.notDone('Change not recorded', outage),
      outage
    )
    expect(plain.title).toBe('Change not recorded: the service was unavailable')
    const atJobEnd = await rendered(report => {
      report.summary.openTitleWith('Deploy succeeded after 2 min 3 s')
      report.summary.notDone('Change not recorded', rejected)
    }, rejected)
    expect(atJobEnd.title).toBe(
      'Deploy succeeded after 2 min 3 s: change not recorded (the service rejected the request)'
    )
  })

  it('says what was not done after what was', async () => {
    const { title } = await rendered(report => {
      report.summary.setTitle('Change', 'recorded')
      report.summary.notDone('Heartbeat not sent', outage)
    }, outage)
    expect(title).toBe('Change recorded; heartbeat not sent: the service was unavailable')
  })

  it('names the action on an input error', async () => {
    const error = new InputError('api-key', 'Input "api-key" is required.')
    const { title } = await rendered(report => report.summary.openTitleWith('Deploy failed'), error)
    expect(title).toBe(`${ACTION_NAME}: an input is invalid`)
  })

  it('cuts table cells at MAX_SUMMARY_CELL_CHARS, and a paragraph only at 500', async () => {
    const long = 'word '.repeat(200)
    const { cells, blocks } = await rendered(report => {
      report.summary.table('Change', [['Description', long]])
      report.summary.note(long)
    })
    expect(Math.max(...cells.map(cell => cell.length))).toBe(MAX_SUMMARY_CELL_CHARS)
    expect(blocks.at(-1)).toHaveLength(500)
  })
})

describe('a dry run', () => {
  /** What a command reports after a call, the same in a real run and a dry one. */
  async function reported(dryRun: boolean): Promise<FakeRunner> {
    const runner = new FakeRunner()
    const report = new Report(runner, new Redactor(), ACTION_WORDS, dryRun)
    report.summary.setTitle('2 changes', 'recorded', ', 1 skipped')
    report.notice(answer('Recorded change c-1.'))
    report.info('Matched 2 services.')
    report.summary.table(
      'Heartbeat',
      [
        ['Monitor', 'm-1'],
        ['Signal id', answer('s-1')]
      ],
      'sent'
    )
    report.summary.list('Services', ['Service', 'Change id'], [['api', answer('c-1')]], 'recorded')
    report.output('change-id', 'c-1')
    report.outputLines('event-ids', ['["e-1"]'])
    report.output('compare-url', 'https://github.com/o/r/compare/a...b')
    await report.finish({ policy: 'auto', jobSummary: true })
    return runner
  }

  it('shows no answer and says what was not done', async () => {
    const runner = await reported(true)
    expect(runner.summary).toContain('## 2 changes not sent, 1 skipped')
    expect(runner.summary).toContain('### Heartbeat \\(not sent\\)')
    expect(runner.summary).toContain('| Monitor | m-1 |')
    expect(runner.summary).toContain('| api | not sent |')
    expect(runner.everything()).not.toMatch(/c-1|s-1|e-1/)
    expect(runner.notices).toEqual([])
    expect(runner.lines).toEqual(['Matched 2 services.', 'Dry run: nothing was sent.'])
  })

  it("sets only the lookup's outputs", async () => {
    expect((await reported(true)).outputs).toEqual({
      'compare-url': 'https://github.com/o/r/compare/a...b'
    })
  })

  it('is told apart from a real run, which shows every answer', async () => {
    const runner = await reported(false)
    expect(runner.summary).toContain('## 2 changes recorded, 1 skipped')
    expect(runner.summary).toContain('### Heartbeat\n')
    expect(runner.summary).toContain('| Signal id | s-1 |')
    expect(runner.summary).toContain('| api | c-1 |')
    expect(runner.notices).toEqual(['Recorded change c-1.'])
    expect(runner.outputs).toMatchObject({ 'change-id': 'c-1', 'event-ids': '["e-1"]' })
  })
})

describe('the dry-run printout of a request', () => {
  const url = new URL('https://tracking.example/v2/change')
  const printed = (body: string, secret?: string): string => {
    const runner = new FakeRunner()
    const redactor = new Redactor()
    if (secret) redactor.add(secret)
    const report = new Report(runner, redactor, ACTION_WORDS, true)
    report.printRequest({ method: 'POST', path: 'v2/change', body }, url)
    return runner.lines.join('\n')
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

describe('Report.table', () => {
  it('leaves out rows without a value and escapes cells', async () => {
    const { runner, report } = setup()
    report.summary.table('Change recorded', [
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
    const report = new Report(runner, redactor, ACTION_WORDS)
    report.summary.table('Change', [
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
    report.summary.table('Links', [
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
    report.summary.table('T', [['Id', hostile]])
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
    await report.cancel('SIGTERM', [{ label: 'A change (POST /v2/change)', records: true }], true)
    expect(runner.outputs['error']).toBe(
      'The run was cancelled (SIGTERM) before it finished. A change (POST /v2/change) was in flight, so it may already have been recorded.'
    )
    expect(runner.warnings[0]).toBe(runner.outputs['error'])
    expect(runner.summary).toContain('## Cancelled')
  })

  it('names a read in flight without saying anything may be recorded, and says when none was', async () => {
    const reading = setup()
    await reading.report.cancel('SIGINT', [{ label: 'GET /v2/hello', records: false }], false)
    expect(reading.runner.outputs['error']).toMatch(
      /\(SIGINT\) before it finished\. GET \/v2\/hello was in flight\.$/
    )
    const idle = setup()
    await idle.report.cancel('SIGINT', [], false)
    expect(idle.runner.outputs['error']).toMatch(/finished\. No request was in flight\.$/)
  })
})

describe('escapeCell', () => {
  it('keeps one line and cuts long text without splitting an emoji', () => {
    expect(escapeCell('a\nb')).toBe('a b')
    const long = '🚀'.repeat(600)
    const cut = escapeCell(long)
    expect(cut.endsWith('…')).toBe(true)
    expect(Array.from(cut).length).toBe(MAX_SUMMARY_CELL_CHARS)
    expect(Array.from(escapeCell(long, 500)).length).toBe(500)
  })

  it('never opens a list where it starts a block of the summary', async () => {
    const runner = new FakeRunner()
    const report = new Report(runner, new Redactor(), ACTION_WORDS)
    for (const text of ['0.', '12) done', '- item', '+ item']) report.summary.note(text)
    await report.finish({ policy: 'auto', jobSummary: true })
    const html = micromark(runner.summary, { extensions: [gfm()], htmlExtensions: [gfmHtml()] })
    expect(html).not.toMatch(/<(ol|ul|li)\b/)
    for (const text of ['0.', '12) done', '- item', '+ item'])
      expect(html).toContain(`<p>${text}</p>`)
  })
})

/**
 * What @actions/core writes to stdout for each call: core.info writes the text and a line end;
 * an annotation is `::name::` and the data with `%`, `\r` and `\n` percent-escaped. Each write
 * is kept apart, so that an annotation's own prefix can be told from an injected one.
 */
class StdoutRunner extends FakeRunner {
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
    const report = new Report(runner, new Redactor(), ACTION_WORDS)
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
    await report.finish({ error: new Error(text), policy, jobSummary: false })
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
    const report = new Report(runner, new Redactor(), ACTION_WORDS)
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
    const { runner, report } = setup()
    report.info(' \u3000::add-mask::x')
    expect(runner.lines).toEqual([' \u3000\\u003a:add-mask::x'])
  })
})

describe('the summary as GitHub renders it', () => {
  /** Links the report builds itself; only these may be links in the rendered summary. */
  const OUR_LINKS = [
    'https://github.com/o/r/actions/runs/1',
    'https://github.com/o/r/compare/a1...b2',
    'https://github.com/o/r/pull/7'
  ]

  /** The tags markdown of our own makes: headings, paragraphs, bold, tables, our links. */
  const OUR_TAGS = new Set([
    'h2',
    'h3',
    'p',
    'strong',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
    'a'
  ])

  function render(markdown: string): string {
    // Raw HTML passes through, as GitHub lets (sanitised) HTML through: the test must see it.
    return micromark(markdown, {
      allowDangerousHtml: true,
      extensions: [gfm()],
      htmlExtensions: [gfmHtml()]
    })
  }

  async function summaryOf(texts: readonly string[]): Promise<string> {
    const runner = new FakeRunner()
    const report = new Report(runner, new Redactor(), ACTION_WORDS)
    const [first = '', ...rest] = texts
    report.summary.setTitle(first, 'recorded')
    report.summary.table(
      first,
      texts.map((text, index) => [`Field ${text}`, index % 2 ? text : { text, url: OUR_LINKS[0] }])
    )
    report.summary.list(
      'Commits',
      ['Commit', 'Author', 'Message'],
      rest.map(text => [{ text: 'a1b2c3d', url: OUR_LINKS[1] }, text, { text, url: OUR_LINKS[2] }])
    )
    report.summary.note(first)
    await report.finish({ error: new Error(first), policy: 'auto', jobSummary: true })
    return runner.summary
  }

  function problems(html: string): string[] {
    const found: string[] = []
    for (const [tag, name = ''] of html.matchAll(/<\/?([a-z][a-z0-9-]*)[^>]*>/gi)) {
      if (!OUR_TAGS.has(name.toLowerCase())) found.push(tag)
    }
    for (const [anchor] of html.matchAll(/<a\b[^>]*>/gi)) {
      const href = /\shref="([^"]*)"/.exec(anchor)?.[1]
      if (href === undefined || !OUR_LINKS.includes(href)) found.push(anchor)
    }
    if (/<img/i.test(html)) found.push('<img')
    if (/<!--/.test(html)) found.push('<!--')
    return found
  }

  const hostile = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          'https://evil.example/login',
          'HTTP://EVIL.EXAMPLE',
          'http://x.y/a_b(c)',
          'ftp://evil.example/f',
          'www.evil.example',
          'WWW.Evil.Example/path',
          'a@b.co',
          'first.last+tag@evil.example',
          'mailto:a@b.co',
          'xmpp:a@b.co',
          '<https://evil.example>',
          '<a@b.co>',
          '<img src=x onerror=alert(1)>',
          '<script>alert(1)</script>',
          '<a href="https://evil.example">x</a>',
          '<!-- hidden -->',
          '<details><summary>x</summary>',
          '[x](javascript:alert(1))',
          '[x](https://evil.example "t")',
          '![i](http://x)',
          '[r]: https://evil.example',
          '*em* _em_ ~~del~~ `code`',
          '|',
          '\\',
          '&',
          '&#58;',
          ':',
          '@',
          '.',
          '/',
          ' ',
          '\n'
        ),
        fc.string({ maxLength: 6 })
      ),
      { maxLength: 10 }
    )
    .map(parts => parts.join(''))

  /** A URL that the cut of a cell (200) or a paragraph (500) falls inside, gluing `…` onto it. */
  const cutInsideUrl = fc
    .oneof(fc.integer({ min: 170, max: 199 }), fc.integer({ min: 470, max: 499 }))
    .map(padding => `${'x '.repeat(padding / 2)}https://evil.example/login?next=account`)

  it('makes no outside text a link, an image or raw HTML; our own links stay links', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(hostile, cutInsideUrl), { minLength: 2, maxLength: 4 }),
        async texts => {
          const html = render(await summaryOf(texts))
          expect(problems(html)).toEqual([])
          for (const link of OUR_LINKS) expect(html).toContain(`<a href="${link}">`)
        }
      ),
      { numRuns: 100 }
    )
  })

  it('keeps outside URLs and addresses readable as text', async () => {
    const html = render(
      await summaryOf(['Deploy https://evil.example/login by a@b.co via www.evil.example'])
    )
    expect(problems(html)).toEqual([])
    expect(html).toContain('Deploy https://evil.example/login by a@b.co via www.evil.example')
  })
})

describe('messages cut to MAX_MESSAGE_CHARS', () => {
  const huge = 'f'.repeat(100_000)
  const length = (text: string | undefined): number => Array.from(text ?? '').length

  it('cuts a 100 KB text in a log line, a notice, a warning, the failure and the error output', async () => {
    const { runner, report } = setup()
    report.info(`Heartbeat for ${huge}`)
    report.notice(huge)
    report.warning(`The pull request head ${huge} is not a commit SHA.`)
    await report.finish({ error: new Error(huge), policy: 'auto', jobSummary: false })
    const printed = [...runner.lines, ...runner.notices, ...runner.warnings, ...runner.failures]
    expect(printed).toHaveLength(4)
    for (const text of [...printed, runner.outputs['error']]) {
      expect(length(text)).toBeLessThanOrEqual(MAX_MESSAGE_CHARS)
      expect(text?.endsWith('…')).toBe(true)
    }
  })

  it('keeps the reason a long error does not fail the step whole', async () => {
    const { runner, report } = setup()
    await report.finish({ error: new Error(huge), policy: 'false', jobSummary: false })
    expect(length(runner.warnings[0])).toBeLessThanOrEqual(MAX_MESSAGE_CHARS)
    expect(runner.warnings[0]).toMatch(/… \(Not failing the step: fail-on-error is false\.\)$/)
  })

  it('cuts after redacting, so a secret across the cut leaves no part of itself', () => {
    const { runner, report } = setup()
    const upToKey = 'x'.repeat(MAX_MESSAGE_CHARS - 4)
    report.warning(`${upToKey}sekrit-key and more`)
    const warning = runner.warnings[0] ?? ''
    expect(length(warning)).toBe(MAX_MESSAGE_CHARS)
    expect(warning.slice(upToKey.length)).toBe('***…')
  })

  it('keeps whole output values such as JSON, which are not messages', () => {
    const { runner, report } = setup()
    const json = JSON.stringify({ ids: Array.from({ length: 2000 }, (_, i) => `event-${i}`) })
    report.output('event-results', json)
    expect(runner.outputs['event-results']).toBe(json)
  })
})
