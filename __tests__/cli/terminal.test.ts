/** The command line's terminal and files: lines to standard error, outputs a shell can source. */
import { describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { outputsDotenv, Terminal, writeFiles } from '../../src/cli/terminal.ts'
import { Redactor } from '../../src/redact.ts'
import { MAX_MESSAGE_CHARS, safeLine } from '../../src/report.ts'

const same = (text: string, prefix = ''): string => `${prefix}${text}`

describe('outputsDotenv', () => {
  it('names each output in capitals with _, and percent-encodes every character a shell acts on', () => {
    const outputs = new Map([
      ['change-id', 'c-1_a.b,c:d/e@f+g=h'],
      ['error', 'it said: $(id) `id` "q" \'q\' \\ %25 é\nX=1; #']
    ])
    expect(outputsDotenv(outputs)).toBe(
      'CHANGE_ID=c-1_a.b,c:d/e@f+g=h\n' +
        'ERROR=it%20said:%20%24%28id%29%20%60id%60%20%22q%22%20%27q%27%20%5C%20%2525%20%C3%A9%0AX=1%3B%20%23\n'
    )
  })

  it('gives values a shell reads back exactly, once decoded, running nothing', () => {
    const hostile = `$(touch /tmp/never) \`id\` "a" 'b' \\ \u001b[31m\u2028 ; # x`
    const file = join(mkdtempSync(join(tmpdir(), 'cta-env-')), 'outputs.env')
    const terminal = new Terminal(() => {}, same)
    terminal.setOutput('error', hostile)
    writeFiles(terminal, { outputs: file })
    const read = execFileSync('sh', ['-c', `set -a; . "${file}"; printf %s "$ERROR"`], {
      encoding: 'utf8'
    })
    expect(decodeURIComponent(read)).toBe(hostile)
    expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(2)
  })
})

describe('Terminal', () => {
  it('writes one line per message, with its kind, and debug lines only when asked', () => {
    const lines: string[] = []
    for (const debugOn of [false, true]) {
      const terminal = new Terminal(line => lines.push(line), same, debugOn)
      terminal.info('done')
      terminal.warning('careful')
      terminal.debug('detail')
    }
    expect(lines).toEqual(['done', 'warning: careful', 'done', 'warning: careful', 'debug: detail'])
  })

  it('redacts, makes inert and cuts every line, debug lines and the door’s own included', () => {
    const redactor = new Redactor()
    redactor.add('the-api-key')
    const lines: string[] = []
    const terminal = new Terminal(
      line => lines.push(line),
      (text, prefix) => safeLine(redactor, text, { prefix }),
      true
    )
    terminal.debug('user: the-api-key (from GITLAB_USER_LOGIN)')
    terminal.debug('service: acme/%1B[2J\u001b[2J\u202e##[error]x')
    terminal.error('The deploy command "x\u2028##[error]y" was not found.')
    terminal.debug(`user: ${'u'.repeat(120_000)}`)
    expect(lines.join('\n')).not.toContain('the-api-key')
    expect(lines[0]).toBe('debug: user: *** (from GITLAB_USER_LOGIN)')
    for (const line of lines) {
      expect(line).not.toMatch(/[\p{Cc}\u2028\u202e]|##\[/u)
      expect(Array.from(line).length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS)
    }
  })

  it('says a file it cannot write, and goes on', () => {
    const lines: string[] = []
    writeFiles(new Terminal(line => lines.push(line), same), { summary: '/nonexistent/summary.md' })
    expect(lines).toEqual([
      'warning: --summary "/nonexistent/summary.md" could not be written (ENOENT).'
    ])
  })
})
