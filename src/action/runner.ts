/**
 * The runner's protocol: inputs, outputs, masking, log commands and the job summary.
 *
 * These are @actions/core's own modules. We import them directly rather than through the
 * package's entry point because that entry point also loads its OIDC client, and with it undici:
 * ~450 KB of bundle and ~35 ms of cold start on every run, for a feature this action never uses.
 * The job summary is appended to its file directly, as core's summary.write() does in the end.
 */
import { randomUUID } from 'node:crypto'
import { appendFileSync } from 'node:fs'
import { issueCommand } from '../../node_modules/@actions/core/lib/command.js'
import {
  issueFileCommand,
  prepareKeyValueMessage
} from '../../node_modules/@actions/core/lib/file-command.js'

/** Everything the action says to the runner goes through one of these. */
export interface Runner {
  /** The raw input, as the runner passes it (INPUT_<NAME>), trimmed. Empty when not given. */
  getInput(name: string): string
  /** Masks a value in the runner's log. */
  setSecret(secret: string): void
  setOutput(name: string, value: string): void
  /**
   * Sets an output whose value is these lines joined by newlines, written line by line, so that
   * a large value (100,000 event ids) is never built whole in memory.
   */
  setOutputLines(name: string, lines: Iterable<string>): void
  debug(message: string): void
  info(message: string): void
  notice(message: string): void
  warning(message: string): void
  /** An error annotation, and a failing exit code. */
  setFailed(message: string): void
  /** Appends markdown to the job summary, when the runner offers one. */
  appendSummary(markdown: string): Promise<void>
}

export const githubRunner: Runner = {
  getInput: name => (process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] ?? '').trim(),
  setSecret: secret => issueCommand('add-mask', {}, secret),
  setOutput: (name, value) => {
    if (process.env['GITHUB_OUTPUT']) {
      issueFileCommand('OUTPUT', prepareKeyValueMessage(name, value))
    } else {
      process.stdout.write('\n')
      issueCommand('set-output', { name }, value)
    }
  },
  setOutputLines: (name, lines) => {
    if (!process.env['GITHUB_OUTPUT']) return githubRunner.setOutput(name, [...lines].join('\n'))
    // The runner's heredoc form, as prepareKeyValueMessage writes it, one line at a time.
    const delimiter = `ghadelimiter_${randomUUID()}`
    issueFileCommand('OUTPUT', `${name}<<${delimiter}`)
    for (const line of lines) {
      if (line.includes(delimiter)) throw new Error(`The ${name} output contains its delimiter.`)
      issueFileCommand('OUTPUT', line)
    }
    issueFileCommand('OUTPUT', delimiter)
  },
  debug: message => issueCommand('debug', {}, message),
  info: message => process.stdout.write(`${message}\n`),
  notice: message => issueCommand('notice', {}, message),
  warning: message => issueCommand('warning', {}, message),
  setFailed: message => {
    process.exitCode = 1
    issueCommand('error', {}, message)
  },
  appendSummary: async markdown => {
    // What core's summary.write() does in the end, without its module (which loads fs/promises).
    const path = process.env['GITHUB_STEP_SUMMARY']
    if (path) appendFileSync(path, `${markdown}\n`)
  }
}
