import type { IdTokenEndpoint, Runner } from '../../src/action/runner.ts'
import { actionDefaults } from '../../scripts/run-bundled-action.ts'
import { Recorder } from './recorder.ts'

/** A runner that records everything the action says, for in-process tests of the action's door. */
export class FakeRunner extends Recorder implements Runner {
  readonly inputs: Record<string, string>
  readonly secrets: string[] = []
  readonly states: Record<string, string> = {}
  /** Each OIDC token asked for: where, and for which audience. */
  readonly tokenRequests: Array<IdTokenEndpoint & { audience: string }> = []
  /** Answers getIDToken; by default the endpoint refuses, as it does a job that may not ask. */
  idToken: (signal: AbortSignal) => Promise<string> = async () => {
    throw new Error('the token endpoint answered HTTP 403')
  }

  /** Inputs not given take action.yml's defaults, as the runner gives them. */
  constructor(inputs: Record<string, string> = {}) {
    super()
    this.inputs = { ...actionDefaults(), ...inputs }
  }

  getInput(name: string): string {
    return (this.inputs[name] ?? '').trim()
  }
  setSecret(secret: string): void {
    this.secrets.push(secret)
  }
  saveState(name: string, value: string): void {
    this.states[name] = value
  }
  getIDToken(endpoint: IdTokenEndpoint, audience: string, signal: AbortSignal): Promise<string> {
    this.tokenRequests.push({ ...endpoint, audience })
    return this.idToken(signal)
  }
}
