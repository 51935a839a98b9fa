/**
 * The end-to-end suite's way to run the action: scripts/run-bundled-action.ts with a bundle built
 * from the current sources (support/bundle.ts), a GitHub token for `${{ github.token }}`, and the
 * suite's own input defaults.
 */
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  actionDefaults as defaultsFor,
  NODE_24,
  parseOutputFile,
  PROJECT_ROOT,
  runBundledAction,
  runnerContext,
  spawnNode,
  type ActionRun,
  type NodeRun,
  type RunOptions as BundledRunOptions
} from '../../scripts/run-bundled-action.ts'
import { actionEntry } from './bundle.ts'

export { NODE_24, parseOutputFile, PROJECT_ROOT, runnerContext, spawnNode }
export type { ActionRun, NodeRun }

/** What a test may set: the entry, expressions and suite defaults are this module's. */
export type RunOptions = Omit<BundledRunOptions, 'entry' | 'expressions' | 'inputDefaults'>

/**
 * Inputs this suite sets unless a test does: the lookup of what a change ships is tested in
 * e2e/shipped.test.ts and e2e/services.test.ts, which ask for it against the fake GitHub API.
 */
const SUITE_DEFAULTS: Record<string, string> = { 'include-commits': 'false' }

/** The token the runner gives `${{ github.token }}` in these runs. */
export const TEST_GITHUB_TOKEN = 'ghs_testTokenForTheEndToEndSuite0000'
/** The expressions action.yml's defaults may use, as the runner would evaluate them here. */
const DEFAULT_EXPRESSIONS: Record<string, string> = {
  'github.token': TEST_GITHUB_TOKEN,
  'job.status': 'success'
}

/** action.yml's input defaults, as the runner applies them here (expressions evaluated). */
export function actionDefaults(): Record<string, string> {
  return defaultsFor(DEFAULT_EXPRESSIONS)
}

/**
 * Where the bundles' children keep Node's compiled code between runs: the suite starts a few
 * hundred of them, and compiling the same bundle each time is most of their start-up.
 */
export const COMPILE_CACHE = join(tmpdir(), 'cta-node-compile-cache')

export async function runAction(options: RunOptions): Promise<ActionRun> {
  return runBundledAction({
    ...options,
    env: { NODE_COMPILE_CACHE: COMPILE_CACHE, ...options.env },
    entry: await actionEntry(),
    expressions: DEFAULT_EXPRESSIONS,
    inputDefaults: SUITE_DEFAULTS
  })
}

/** A runAction bound to a service: its key and address are given, other inputs per call. */
export function actionAgainst(
  service: { apiKey: string; url: string },
  caCertPath: string
): (inputs: Record<string, string>, options?: Partial<RunOptions>) => Promise<ActionRun> {
  return (inputs, options = {}) =>
    runAction({
      inputs: { 'api-key': service.apiKey, 'base-url': service.url, ...inputs },
      caCertPath,
      ...options
    })
}
