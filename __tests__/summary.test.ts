/**
 * The job summary as markdown, from a command's title and sections and how the run ended: pure,
 * read as GitHub renders it. Titles from `Title` and `Ending`, the lead tables first, the failure
 * or cancel line after them, a dry run's words, every cell escaped and cut, and no link but ours.
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { micromark } from 'micromark'
import { gfm, gfmHtml } from 'micromark-extension-gfm'
import { InputError, ServiceError } from '../src/errors.ts'
import { ACTION_NAME } from '../src/package.ts'
import { Redactor } from '../src/redact.ts'
import {
  answer,
  escapeCell,
  formatField,
  MAX_SUMMARY_CELL_CHARS,
  Summary,
  type Ending,
  type Section,
  type SummaryRow,
  type Title
} from '../src/summary.ts'
import { renderSummary } from './support/summary.ts'

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

/** How a run ended with this error, as the report hands it over: failing, or a warning. */
function failed(error: Error, fails = true, after = ''): Ending {
  return { failed: { error, fails, message: error.message, after } }
}

function markdown(
  title: Title,
  sections: readonly Section[],
  ending?: Ending,
  { dryRun = false, redactor = new Redactor() } = {}
): string {
  const written = new Summary(redactor, dryRun).markdown(title, sections, ending)
  if (written === undefined) throw new Error('no summary was written')
  return written
}

const rendered = (...args: Parameters<typeof markdown>) => renderSummary(markdown(...args))
const A_TABLE: Section = { table: 'Change', rows: [['Id', 'c-1']] }

describe('the title', () => {
  it('says what was done, and what follows its outcome', () => {
    const done = { subject: '2 changes', outcome: 'recorded', rest: ', 1 skipped' } as const
    expect(rendered({ done }, [A_TABLE]).title).toBe('2 changes recorded, 1 skipped')
    expect(rendered({ done: { subject: 'No change recorded' } }, [A_TABLE]).title).toBe(
      'No change recorded'
    )
  })

  it('opens with how the deploy ended, then says what was done', () => {
    const title = {
      opening: 'Deploy failed after 9 s',
      done: { subject: 'Change', outcome: 'recorded' }
    } as const
    expect(rendered(title, [A_TABLE]).title).toBe('Deploy failed after 9 s: change recorded')
    expect(rendered({ opening: 'Deploy failed after 9 s' }, [A_TABLE]).title).toBe(
      'Deploy failed after 9 s'
    )
  })

  it('says plainly what was not done and why, after the opening in brackets', () => {
    const notDone = { what: 'Change not recorded', error: outage }
    expect(rendered({ notDone }, [A_TABLE], failed(outage, false)).title).toBe(
      'Change not recorded: the service was unavailable'
    )
    const atJobEnd = {
      opening: 'Deploy succeeded after 2 min 3 s',
      notDone: { what: 'Change not recorded', error: rejected }
    }
    expect(rendered(atJobEnd, [A_TABLE], failed(rejected)).title).toBe(
      'Deploy succeeded after 2 min 3 s: change not recorded (the service rejected the request)'
    )
  })

  it('says what was not done after what was', () => {
    const title: Title = {
      done: { subject: 'Change', outcome: 'recorded' },
      notDone: { what: 'Heartbeat not sent', error: outage }
    }
    expect(rendered(title, [A_TABLE], failed(outage, false)).title).toBe(
      'Change recorded; heartbeat not sent: the service was unavailable'
    )
  })

  it('says that what was done then failed, or ended with a warning', () => {
    const done = { subject: 'Change', outcome: 'recorded' } as const
    expect(rendered({ done }, [A_TABLE], failed(rejected)).title).toBe(
      'Change recorded, then failed'
    )
    expect(rendered({ done }, [A_TABLE], failed(outage, false)).title).toBe(
      'Change recorded (with a warning)'
    )
  })

  it('names the action on an input error, whatever was said before it', () => {
    const error = new InputError('api-key', ' is required.')
    expect(rendered({ opening: 'Deploy failed' }, [], failed(error)).title).toBe(
      `${ACTION_NAME}: an input is invalid`
    )
  })

  it('names the action and why when the run failed before saying anything', () => {
    expect(rendered({}, [], failed(outage)).title).toBe(
      `${ACTION_NAME}: the service was unavailable`
    )
  })

  it('is "Cancelled" after a cancel, whatever was done', () => {
    const done = { subject: 'Change', outcome: 'recorded' } as const
    expect(rendered({ done }, [A_TABLE], { cancelled: 'Stopped.' }).title).toBe('Cancelled')
  })

  it('is "Change tracking" until something says what happened, and keeps "API key valid" as it is', () => {
    expect(rendered({}, [A_TABLE]).title).toBe('Change tracking')
    const title: Title = {
      opening: 'Checked',
      done: { subject: 'API key', outcome: 'valid' }
    }
    expect(rendered(title, [A_TABLE]).title).toBe('Checked: API key valid')
  })

  it('is left out with the whole summary when there is nothing to show', () => {
    const summary = new Summary(new Redactor(), false)
    expect(
      summary.markdown({ done: { subject: 'Change', outcome: 'recorded' } }, [])
    ).toBeUndefined()
    expect(summary.markdown({}, [{ table: 'Empty', rows: [['Id', undefined]] }])).toBeUndefined()
  })
})

describe('the order of the blocks', () => {
  it('puts the lead right under the title, then the failure line, then every other section', () => {
    const sections: Section[] = [
      { table: 'Change', rows: [['Service', 'shop']] },
      { lead: 'Deploy', rows: [['Outcome', 'failure']] },
      { note: 'Heartbeat not sent.' }
    ]
    expect(rendered({}, sections, failed(rejected)).blocks).toEqual([
      'Deploy',
      `Failed: ${rejected.message}`,
      'Change',
      'Heartbeat not sent.'
    ])
  })

  it('says a warning as one, with what follows it, and a cancel as its own line', () => {
    const lead: Section = { lead: 'Deploy', rows: [['Outcome', 'success']] }
    const warned = rendered({}, [lead], failed(outage, false, '(Not failing.)'))
    expect(warned.blocks).toEqual(['Deploy', `Warning: ${outage.message}. (Not failing.)`])
    const cancelled = rendered({}, [lead, A_TABLE], {
      cancelled: 'The run was cancelled (SIGINT).'
    })
    expect(cancelled.blocks).toEqual([
      'Deploy',
      'Cancelled: The run was cancelled (SIGINT).',
      'Change'
    ])
  })
})

describe('tables and notes', () => {
  it('leave out rows without a value, and a table with none', () => {
    const written = markdown({}, [
      {
        table: 'Change recorded',
        rows: [
          ['Id', 'c-1'],
          ['Environment', undefined],
          ['Team', '']
        ]
      },
      { table: 'Nothing', rows: [['Id', undefined]] }
    ])
    expect(written).toContain('| Field | Value |\n| --- | --- |\n| Id | c-1 |\n')
    expect(written).not.toMatch(/Environment|Team|Nothing/)
  })

  it('list rows under their headers', () => {
    const { cells, blocks } = rendered({}, [
      {
        list: 'Services',
        headers: ['Service', 'Change id'],
        rows: [
          ['api', 'c-1'],
          ['web', 'c-2']
        ]
      }
    ])
    expect(blocks).toEqual(['Services'])
    expect(cells).toEqual(['api', 'c-1', 'web', 'c-2'])
  })
})

describe('a dry run', () => {
  const title: Title = { done: { subject: '2 changes', outcome: 'recorded', rest: ', 1 skipped' } }
  const sections: Section[] = [
    {
      table: 'Heartbeat',
      rows: [
        ['Monitor', 'm-1'],
        ['Signal id', answer('s-1')]
      ],
      outcome: 'sent'
    },
    {
      list: 'Services',
      headers: ['Service', 'Change id'],
      rows: [['api', answer('c-1')]],
      outcome: 'recorded'
    },
    { table: 'Read', rows: [['Id', answer('c-9')]], outcome: 'read' }
  ]

  it('shows no answer and says what was not done', () => {
    const written = markdown(title, sections, undefined, { dryRun: true })
    expect(written).toContain('## 2 changes not sent, 1 skipped')
    expect(written).toContain('### Heartbeat \\(not sent\\)')
    expect(written).toContain('| Monitor | m-1 |')
    expect(written).toContain('| api | not sent |')
    expect(written).not.toMatch(/c-1|s-1|c-9|### Read/)
  })

  it('is told apart from a real run, which shows every answer', () => {
    const written = markdown(title, sections)
    expect(written).toContain('## 2 changes recorded, 1 skipped')
    expect(written).toContain('### Heartbeat\n')
    expect(written).toContain('| Signal id | s-1 |')
    expect(written).toContain('| api | c-1 |')
    expect(written).toContain('| Id | c-9 |')
  })

  it('says what a read or a check would have done', () => {
    const dry = { dryRun: true }
    expect(
      rendered({ done: { subject: 'Change', outcome: 'read' } }, [A_TABLE], undefined, dry).title
    ).toBe('Change not read')
    expect(
      rendered({ done: { subject: 'API key', outcome: 'valid' } }, [A_TABLE], undefined, dry).title
    ).toBe('API key not checked')
  })
})

describe('cells, cut and escaped', () => {
  it('cuts a table cell at MAX_SUMMARY_CELL_CHARS, and a paragraph only at 500', () => {
    const long = 'word '.repeat(200)
    const { cells, blocks } = rendered({}, [
      { table: 'Change', rows: [['Description', long]] },
      { note: long }
    ])
    expect(Math.max(...cells.map(cell => cell.length))).toBe(MAX_SUMMARY_CELL_CHARS)
    expect(blocks.at(-1)).toHaveLength(500)
  })

  it('escapes what would be markup in a cell', () => {
    const written = markdown({}, [{ table: 'Change', rows: [['Description', 'a | b <script>']] }])
    expect(written).toContain('| Description | a &#124; b &lt;script&gt; |')
  })

  it('redacts a cell before escaping and cutting it, so no form of a secret survives', () => {
    const redactor = new Redactor()
    const key = 'sk_live_' + 'a_b'.repeat(200)
    redactor.add(key)
    const written = markdown(
      {},
      [
        {
          table: 'Change',
          rows: [
            ['Description', `echo ${key}`],
            ['Id', key]
          ]
        }
      ],
      undefined,
      { redactor }
    )
    expect(written).not.toContain('sk\\_live')
    expect(written).not.toContain('a\\_b')
    expect(written).toContain('| Description | echo \\*\\*\\* |')
  })

  it('never opens a list where a note starts a block', () => {
    const texts = ['0.', '12) done', '- item', '+ item']
    const { html } = rendered(
      {},
      texts.map(note => ({ note }))
    )
    expect(html).not.toMatch(/<(ol|ul|li)\b/)
    for (const text of texts) expect(html).toContain(`<p>${text}</p>`)
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
})

describe('links', () => {
  it('links only http(s) URLs, with the characters that could end the link encoded', () => {
    const written = markdown({}, [
      {
        table: 'Links',
        rows: [
          ['Run', { text: 'run', url: 'https://github.com/o/r/actions/runs/1)[x](javascript:y' }],
          ['Bad', { text: 'click', url: 'javascript:alert(1)' }],
          ['Long', { text: 'long', url: `https://github.com/${'a'.repeat(2048)}` }],
          ['Both', [{ text: 'one', url: 'https://github.com/o/r/pull/1' }, { text: 'two' }]]
        ]
      }
    ])
    expect(written).toContain(
      '[run](https://github.com/o/r/actions/runs/1%29%5Bx%5D%28javascript:y)'
    )
    expect(written).toContain('| Bad | click |')
    expect(written).toContain('| Long | long |')
    expect(written).toContain('| Both | [one](https://github.com/o/r/pull/1), two |')
  })

  /** Links the summary's sections build; only these may be links in what GitHub renders. */
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

  /** Outside text in every place a summary shows it: title, cells, link texts, note, failure. */
  function summaryOf(texts: readonly string[]): string {
    const [first = '', ...rest] = texts
    const sections: Section[] = [
      {
        table: first,
        rows: texts.map((text, index): SummaryRow => [
          `Field ${text}`,
          index % 2 ? text : { text, url: OUR_LINKS[0] }
        ])
      },
      {
        list: 'Commits',
        headers: ['Commit', 'Author', 'Message'],
        rows: rest.map(text => [
          { text: 'a1b2c3d', url: OUR_LINKS[1] },
          text,
          { text, url: OUR_LINKS[2] }
        ])
      },
      { note: first }
    ]
    return markdown(
      { done: { subject: first, outcome: 'recorded' } },
      sections,
      failed(new Error(first))
    )
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

  it('makes no outside text a link, an image or raw HTML; our own links stay links', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(hostile, cutInsideUrl), { minLength: 2, maxLength: 4 }),
        texts => {
          const html = render(summaryOf(texts))
          expect(problems(html)).toEqual([])
          for (const link of OUR_LINKS) expect(html).toContain(`<a href="${link}">`)
        }
      ),
      { numRuns: 100 }
    )
  })

  it('keeps outside URLs and addresses readable as text', () => {
    const html = render(
      summaryOf(['Deploy https://evil.example/login by a@b.co via www.evil.example', 'x'])
    )
    expect(problems(html)).toEqual([])
    expect(html).toContain('Deploy https://evil.example/login by a@b.co via www.evil.example')
  })
})

describe('formatField', () => {
  it('shows created_at also as a date, a text as it is, any other value as JSON, and nothing as nothing', () => {
    expect(formatField('created_at', 1_700_000_000)).toBe('2023-11-14T22:13:20.000Z (1700000000)')
    expect(formatField('created_at', '1700000000')).toBe('1700000000')
    expect(formatField('labels', ['a', 'b'])).toBe('["a","b"]')
    expect(formatField('team', undefined)).toBeUndefined()
    expect(formatField('team', null)).toBeUndefined()
  })
})
