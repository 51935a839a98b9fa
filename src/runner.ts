/**
 * The runner's protocol: inputs, outputs, masking, log commands and the job summary.
 *
 * These are @actions/core's own modules. We import them directly rather than through the
 * package's entry point because that entry point also loads its OIDC client, and with it undici:
 * ~450 KB of bundle and ~35 ms of cold start on every run, for a feature this action never uses.
 */
import { issueCommand } from '../node_modules/@actions/core/lib/command.js'
import {
  issueFileCommand,
  prepareKeyValueMessage
} from '../node_modules/@actions/core/lib/file-command.js'
import { summary } from '../node_modules/@actions/core/lib/summary.js'

/** Everything the action says to the runner goes through one of these. */
export interface Runner {
  /** The raw input, as the runner passes it (INPUT_<NAME>), trimmed. Empty when not given. */
  getInput(name: string): string
  /** Masks a value in the runner's log. */
  setSecret(secret: string): void
  setOutput(name: string, value: string): void
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
  debug: message => issueCommand('debug', {}, message),
  info: message => process.stdout.write(`${message}\n`),
  notice: message => issueCommand('notice', {}, message),
  warning: message => issueCommand('warning', {}, message),
  setFailed: message => {
    process.exitCode = 1
    issueCommand('error', {}, message)
  },
  appendSummary: async markdown => {
    if (!process.env['GITHUB_STEP_SUMMARY']) return
    await summary.addRaw(markdown, true).write()
    summary.emptyBuffer()
  }
}
