/**
 * What the event pipeline says about a bad input. The pipeline does not know which action input
 * the events came from: the command layer puts the input's name in front of `detail`.
 */

/** Where an event is: a line of NDJSON (or of a file), or the n-th event of a JSON document. */
export interface EventPosition {
  unit: 'line' | 'event'
  /** 1-based. */
  at: number
}

/** One event that cannot be sent, and why. */
export interface EventProblem {
  position: EventPosition
  problem: string
}

/**
 * - invalid: an event (or the whole input) is not what the interface accepts; nothing was sent.
 * - unreadable: the file cannot be read.
 * - changed: the file changed between validating and sending.
 */
export type EventsErrorKind = 'invalid' | 'unreadable' | 'changed'

export class EventsError extends Error {
  readonly kind: EventsErrorKind
  /** The rest of the sentence after the input's name: ", line 3: …" or " has no events. …". */
  readonly detail: string
  /** The events named in `detail`, in input order (at most MAX_LISTED_PROBLEMS of them). */
  readonly problems: readonly EventProblem[]

  constructor(kind: EventsErrorKind, detail: string, problems: readonly EventProblem[] = []) {
    super(`The events${detail}`)
    this.name = 'EventsError'
    this.kind = kind
    this.detail = detail
    this.problems = problems
  }
}

/** "line 7" or "event 3". */
export function describePosition(position: EventPosition): string {
  return `${position.unit} ${position.at}`
}

/** The file changed between the two passes. */
export function changedError(what: string): EventsError {
  return new EventsError(
    'changed',
    ` changed while its events were being sent: ${what}. Make sure nothing writes to it during this step.`
  )
}
