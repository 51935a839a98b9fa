/**
 * Jest's order, but for a run with no timings cached (CI's first run): Jest then starts the
 * largest files first, and these small files that mostly wait (a 6 s @github/local-action run,
 * a DNS server that never answers, an OIDC endpoint that never answers) would start last and
 * hold the run open after every other worker is done. They start first instead.
 */
import Sequencer from '@jest/test-sequencer'

const SLOW_SMALL_FILES = [
  '/__tests__/local-action.test.ts',
  '/__tests__/e2e/resolver.test.ts',
  '/__tests__/e2e/job-environment.test.ts'
]

export default class ColdFirstSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests)
    if (sorted.some(test => test.duration != null)) return sorted
    const first = test =>
      SLOW_SMALL_FILES.some(end => test.path.replaceAll('\\', '/').endsWith(end))
    return [...sorted.filter(first), ...sorted.filter(test => !first(test))]
  }
}
