/**
 * The regular expressions a piece of work runs, and what they read: how a test proves a scan of
 * outside text bounded and linear by the work itself, without a clock. Every way to run a pattern
 * (test, match, replace, split) calls RegExp.prototype.exec once it is replaced, so replacing it
 * for the work's duration sees them all.
 */

/** A pattern the work ran, and the longest text it was given. */
export interface Scan {
  pattern: RegExp
  longest: number
}

/** Runs `work`, and tells each pattern it ran (by its source and flags) with its longest text. */
export function scansOf(work: () => unknown): Scan[] {
  const scans = new Map<string, Scan>()
  const exec = RegExp.prototype.exec
  RegExp.prototype.exec = function (this: RegExp, text: string) {
    const key = String(this)
    const longest = Math.max(scans.get(key)?.longest ?? 0, String(text).length)
    scans.set(key, { pattern: this, longest })
    return exec.call(this, text)
  }
  try {
    work()
  } finally {
    RegExp.prototype.exec = exec
  }
  return [...scans.values()]
}

/**
 * Whether a pattern may restart at each position of a long text and read far at each, the shape
 * of a scan in the square of the text's length: it is not anchored at the text's start, and it
 * repeats without a bound (`*`, `+`, `{n,}`), unless it is one character or class repeated, which
 * fails at the first character it reads or matches all it reads.
 */
export function restartsFar({ source, flags }: RegExp): boolean {
  // An escape or a class reads one character: what remains is the pattern's shape.
  const shape = source.replace(/\\.|\[(?:\\.|[^\]\\])*\]/g, 'c')
  const anchored = shape.startsWith('^') && !flags.includes('m') && !hasTopLevelAlternative(shape)
  const unbounded = /[*+]|\{\d+,\}/.test(shape)
  const oneRepeated = /^[^()|][*+]\??$/.test(shape)
  return !anchored && unbounded && !oneRepeated
}

/** Whether a pattern's shape has an alternative outside every group: `^a|b` is not anchored. */
function hasTopLevelAlternative(shape: string): boolean {
  let depth = 0
  for (const char of shape) {
    if (char === '(') depth++
    else if (char === ')') depth--
    else if (char === '|' && depth === 0) return true
  }
  return false
}
