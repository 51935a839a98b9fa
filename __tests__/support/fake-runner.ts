import type { IdTokenEndpoint, Runner } from '../../src/action/runner.ts'
import { actionDefaults } from '../../scripts/run-bundled-action.ts'

/** A runner that records everything the action says, for in-process tests. */
export class FakeRunner implements Runner {
  readonly inputs: Record<string, string>
  readonly secrets: string[] = []
  readonly outputs: Record<string, string> = {}
  readonly lines: string[] = []
  readonly notices: string[] = []
  readonly warnings: string[] = []
  readonly errors: string[] = []
  readonly failures: string[] = []
  readonly states: Record<string, string> = {}
  readonly debugs: string[] = []
  /** Each OIDC token asked for: where, and for which audience. */
  readonly tokenRequests: Array<IdTokenEndpoint & { audience: string }> = []
  /** Answers getIDToken; by default the endpoint refuses, as it does a job that may not ask. */
  idToken: (signal: AbortSignal) => Promise<string> = async () => {
    throw new Error('the token endpoint answered HTTP 403')
  }
  summary = ''

  /** Inputs not given take action.yml's defaults, as the runner gives them. */
  constructor(inputs: Record<string, string> = {}) {
    this.inputs = { ...actionDefaults(), ...inputs }
  }

  getInput(name: string): string {
    return (this.inputs[name] ?? '').trim()
  }
  setSecret(secret: string): void {
    this.secrets.push(secret)
  }
  setOutput(name: string, value: string): void {
    this.outputs[name] = value
  }
  setOutputLines(name: string, lines: Iterable<string>): void {
    this.outputs[name] = [...lines].join('\n')
  }
  info(message: string): void {
    this.lines.push(message)
  }
  debug(message: string): void {
    this.debugs.push(message)
  }
  notice(message: string): void {
    this.notices.push(message)
  }
  warning(message: string): void {
    this.warnings.push(message)
  }
  error(message: string): void {
    this.errors.push(message)
  }
  setFailed(message: string): void {
    this.failures.push(message)
  }
  async appendSummary(markdown: string): Promise<void> {
    this.summary += markdown
  }
  saveState(name: string, value: string): void {
    this.states[name] = value
  }
  getIDToken(endpoint: IdTokenEndpoint, audience: string, signal: AbortSignal): Promise<string> {
    this.tokenRequests.push({ ...endpoint, audience })
    return this.idToken(signal)
  }

  /** Everything the action printed, output or summarised, as one text (for leak checks). */
  everything(): string {
    return [
      ...this.lines,
      ...this.debugs,
      ...this.notices,
      ...this.warnings,
      ...this.errors,
      ...this.failures,
      ...Object.values(this.outputs),
      this.summary
    ].join('\n')
  }
}
