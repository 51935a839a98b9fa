/** The `services` input: one service per line, `NAME` or `NAME: PATTERN PATTERN …`. */
import { InputError, quote, QUOTED_VALUE_MAX_CHARS } from '../errors.ts'
import { Inputs, type InputName, type ServiceSpec } from '../settings.ts'
import { hasUnsafeCharacter, inert, truncateText } from '../helpers/text.ts'

/** The label after the risk categories when not every changed path was read; no category's name. */
export const INCOMPLETE_RISK = 'incomplete'

/** A monorepo's deploy step rarely names more; the bound keeps one run's changes and summary sane. */
export const MAX_SERVICES = 100
/** Longer names are almost surely a pasted mistake, and they crowd every summary line. */
const MAX_SERVICE_NAME_CHARS = 100
/** One line holds one service; a longer one is a paste gone wrong, not a pattern list. */
const MAX_SERVICES_LINE_CHARS = 2000
/** Bounds the matchers compiled per service (each pattern is a regular expression). */
export const MAX_PATTERNS_PER_SERVICE = 50

const SERVICE_NAME = /^[A-Za-z0-9._/@-]+$/
const NAME_RULE = `up to ${MAX_SERVICE_NAME_CHARS} letters, digits and . _ - / @`
const FORMS = `Each line is NAME or NAME: PATTERN PATTERN … (NAME is ${NAME_RULE}; patterns are globs relative to the repository root, separated by spaces, "!" to exclude).`

/**
 * In the order given, without blank and "#" lines; undefined when none. `input` names the input in
 * messages: `risk-paths` is written in the same grammar.
 */
export function parseServices(
  raw: string,
  input: InputName = Inputs.Services
): ServiceSpec[] | undefined {
  const specs: ServiceSpec[] = []
  for (const [index, text] of raw.split(/\r\n|\r|\n/).entries()) {
    const line = index + 1
    const fail: Fail = problem => {
      throw new InputError(input, `, line ${line}, ${problem}`)
    }
    // Tabs are spacing, as in any YAML block; every other control character is refused below.
    const content = text.replace(/\t/g, ' ').trim()
    if (content === '' || content.startsWith('#')) continue
    if (specs.length === MAX_SERVICES) {
      fail(`lists more than ${MAX_SERVICES} services; split them over several steps.`)
    }
    const spec = parseLine(content, line, fail)
    if (input === Inputs.RiskPaths && spec.name === INCOMPLETE_RISK)
      fail(`names "${INCOMPLETE_RISK}", the label of a risk not read from every path.`)
    const first = specs.find(known => known.name === spec.name)?.line
    if (first !== undefined) {
      fail(
        `names the service ${quote(spec.name)} again (first on line ${first}); give each service once, with all its patterns on one line.`
      )
    }
    specs.push(spec)
  }
  return specs.length === 0 ? undefined : specs
}

function parseLine(content: string, line: number, fail: Fail): ServiceSpec {
  if (content.length > MAX_SERVICES_LINE_CHARS) {
    fail(`is ${content.length} characters long; at most ${MAX_SERVICES_LINE_CHARS} are accepted.`)
  }
  if (hasUnsafeCharacter(content)) {
    fail(`contains a control, line-separator or bidirectional character: ${quote(content)}.`)
  }
  const colon = content.indexOf(':')
  const name = (colon === -1 ? content : content.slice(0, colon)).trim()
  const patterns = colon === -1 ? [] : (content.slice(colon + 1).match(/\S+/g) ?? [])
  checkName(name, colon === -1, fail)
  if (colon !== -1 && patterns.length === 0) {
    fail(
      `has nothing after "${name}:". Write ${name} alone to record it on every deploy, or list its patterns after the colon, as ${name}: services/${name}/**.`
    )
  }
  if (patterns.length > MAX_PATTERNS_PER_SERVICE) {
    fail(
      `gives ${patterns.length} patterns for ${quote(name)}; at most ${MAX_PATTERNS_PER_SERVICE} are accepted. Use ** and {a,b} to say more with fewer.`
    )
  }
  for (const pattern of patterns) checkPattern(pattern, fail)
  if (patterns.length > 0 && patterns.every(pattern => pattern.startsWith('!'))) {
    fail(
      `gives only "!" patterns for ${quote(name)}, which exclude but never include a file. Add what to include first, as ${name}: ** ${patterns[0]}.`
    )
  }
  return { name, patterns, line }
}

function checkName(name: string, withoutColon: boolean, fail: Fail): void {
  if (name === '') fail(`has no service name before the colon. ${FORMS}`)
  if (/\s/.test(name)) {
    const [first, ...rest] = name.split(/\s+/)
    const forgotColon = withoutColon
      ? ` If ${quote(rest.join(' '))} lists patterns, put a colon after the name, as ${truncateText(`${first}: ${rest.join(' ')}`, QUOTED_VALUE_MAX_CHARS)}.`
      : ''
    fail(`has a service name with spaces, ${quote(name)}.${forgotColon} ${FORMS}`)
  }
  if (name.length > MAX_SERVICE_NAME_CHARS) {
    fail(
      `has a service name of ${name.length} characters; at most ${MAX_SERVICE_NAME_CHARS} are accepted.`
    )
  }
  if (!SERVICE_NAME.test(name)) {
    fail(`has the service name ${quote(name)}; a service name is ${NAME_RULE}.`)
  }
}

/** Refuses a pattern that could never match a path as GitHub lists them, or hides a mistake. */
function checkPattern(pattern: string, fail: Fail): void {
  const bad = (why: string): never => fail(`has the pattern ${quote(pattern)}, which ${why}`)
  const glob = pattern.startsWith('!') ? pattern.slice(1) : pattern
  if (glob === '') bad('excludes nothing: put "!" right before a pattern, as !docs/**.')
  if (glob.startsWith('!')) bad('starts with more than one "!"; a single "!" excludes.')
  if (glob.startsWith('#')) bad('starts with "#": comments go on a line of their own.')
  if (glob.includes('\\')) {
    bad(
      'contains a backslash: separate folders with "/", and match a special character literally with brackets, as [*].'
    )
  }
  if (glob.startsWith('/')) {
    bad(
      `is absolute: patterns are relative to the repository root, as ${glob.replace(/^\/+/, '')}.`
    )
  }
  if (glob.endsWith('/')) bad(`ends with "/": write ${glob}** to match everything under a folder.`)
  const segments = glob.split('/')
  if (segments.includes('')) bad('has an empty path segment ("//").')
  if (segments.some(segment => segment === '.' || segment === '..')) {
    bad('has a "." or ".." segment: write paths from the repository root, without ./ or ../.')
  }
}

/**
 * Refuses a pattern that picomatch cannot compile, before anything is sent. Apart from
 * parseServices so that glob matching is loaded only for runs that give services.
 */
export async function checkServiceGlobs(
  specs: readonly ServiceSpec[],
  input: InputName = Inputs.Services
): Promise<void> {
  const [{ default: picomatch }, { GLOB_OPTIONS }] = await Promise.all([
    import('picomatch'),
    import('./selection.ts')
  ])
  for (const { line, patterns } of specs) {
    for (const pattern of patterns) {
      try {
        picomatch(pattern.replace(/^!/, ''), GLOB_OPTIONS)
      } catch (error) {
        // picomatch suggests escaping with "\", which this input refuses; brackets do the same job.
        const detail = error instanceof Error ? error.message.replace(/\s+-\s+use .*$/, '') : ''
        throw new InputError(
          input,
          `, line ${line}, has the pattern ${quote(pattern)}, which is not a valid glob (${inert(detail)}); to match [ ] { } ( ) literally, put it in brackets, as [[].`
        )
      }
    }
  }
}

type Fail = (problem: string) => never
