/**
 * A renderer that records everything a report says, for tests of the core that go through no
 * door, with words that are neither door's.
 */
import type { DoorWords, Renderer } from '../../src/report.ts'
import { Inputs } from '../../src/settings.ts'

/** Words of no door: each setting is named `<name>`, so a test sees which one a message names. */
export const TEST_WORDS: DoorWords = {
  inputNames: Object.fromEntries(Object.values(Inputs).map(name => [name, `<${name}>`])),
  advice: {
    changeWait: 'raise <timeout-seconds>',
    checkAddress: 'check <base-url>',
    checkApiKey: 'check <api-key>'
  },
  hints: {},
  missingKey: 'No key.',
  notFailing: { outage: '(an outage)', unreported: '(not reported)', false: '(false)' },
  beforeDeploy: {
    failsNow: '(deploy not run)',
    failsAfterDeploy: '(fails after the deploy)',
    recordsAfterDeploy: '(recorded after the deploy)',
    warns: '(deploy unrecorded)'
  },
  outputsAdvice: 'Check the disk.'
}

export class Recorder implements Renderer {
  readonly outputs: Record<string, string> = {}
  readonly lines: string[] = []
  readonly debugs: string[] = []
  readonly notices: string[] = []
  readonly warnings: string[] = []
  readonly errors: string[] = []
  readonly failures: string[] = []
  summary = ''

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

  /** Everything said, output or summarised, as one text (for leak checks). */
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
