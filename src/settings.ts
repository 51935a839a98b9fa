/**
 * What a run is asked to do, whichever door asked: the settings' and outputs' names, the commands
 * and modes, and the typed `Settings` that values/read-settings.ts makes of a door's strings.
 */
import type { EventOutcome } from './deploy.ts'
import type { InputError } from './errors.ts'

/** The settings' names: the action's inputs (action.yml) and the command line's flags. */
export const Inputs = {
  ApiKey: 'api-key',
  BaseUrl: 'base-url',
  Command: 'command',
  Description: 'description',
  Environment: 'environment',
  Service: 'service',
  Version: 'version',
  User: 'user',
  Comment: 'comment',
  Team: 'team',
  Labels: 'labels',
  CustomMetadata: 'custom-metadata',
  CreatedAt: 'created-at',
  GithubMetadata: 'github-metadata',
  HeartbeatId: 'heartbeat-id',
  FailOnError: 'fail-on-error',
  DryRun: 'dry-run',
  TimeoutSeconds: 'timeout-seconds',
  MaxAttempts: 'max-attempts',
  JobSummary: 'job-summary',
  Events: 'events',
  EventsFile: 'events-file',
  EventIds: 'event-ids',
  ChangeId: 'change-id',
  GithubToken: 'github-token',
  IncludeCommits: 'include-commits',
  PreviousVersion: 'previous-version',
  Services: 'services',
  RecordAt: 'record-at',
  JobStatus: 'job-status',
  AutoLabels: 'auto-labels',
  RiskPaths: 'risk-paths',
  IssueKeys: 'issue-keys',
  Remediates: 'remediates',
  OtelAttributes: 'otel-attributes',
  Artifact: 'artifact'
} as const
export type InputName = (typeof Inputs)[keyof typeof Inputs]

/** The outputs' names (action.yml), which the command line writes too. */
export const Outputs = {
  ChangeId: 'change-id',
  HeartbeatSignalId: 'heartbeat-signal-id',
  Error: 'error',
  EventIds: 'event-ids',
  EventResults: 'event-results',
  Change: 'change',
  PreviousVersion: 'previous-version',
  CommitCount: 'commit-count',
  CompareUrl: 'compare-url',
  Rollback: 'rollback',
  ChangeIds: 'change-ids',
  SkippedServices: 'skipped-services',
  Cdevent: 'cdevent'
} as const
export type OutputName = (typeof Outputs)[keyof typeof Outputs]

export const COMMANDS = [
  'change',
  'heartbeat',
  'events',
  'event-results',
  'get-change',
  'hello'
] as const
export type Command = (typeof COMMANDS)[number]

/** When a change or heartbeat is recorded: as the step runs, or when the job ends (the post step). */
export const RECORD_AT_MODES = ['now', 'job-end'] as const
export type RecordAt = (typeof RECORD_AT_MODES)[number]

export const FAIL_ON_ERROR_MODES = ['auto', 'true', 'false'] as const
export type FailOnError = (typeof FAIL_ON_ERROR_MODES)[number]

/** How a run reports: read before the other inputs, so that their errors are reported under it. */
export interface ReportingSettings {
  /** What the run does: a read fails on any error (see the failure policy). */
  command: Command
  failOnError: FailOnError
  jobSummary: boolean
  /** `job-end`: the post step records, after the job's steps; under `auto` a failure waits too. */
  recordAt: RecordAt
  /** Why one of them is invalid: readSettings throws it. */
  error?: InputError
}

/** The change fields the user gave. Each is undefined when its input is empty. */
export interface ChangeFields {
  description?: string
  environment?: string
  service?: string
  version?: string
  user?: string
  comment?: string
  team?: string
  /** Trimmed, without empties or duplicates, in the order given. */
  labels?: string[]
  /** The parsed custom-metadata JSON value. */
  customMetadata?: unknown
  /** Integer Unix seconds. */
  createdAt?: number
  /** The image or package that shipped. */
  artifact?: Artifact
}

/** `reference` is the image's, normalized: registry, path, tag and digest. */
export type Artifact = { purl?: string; reference?: string; digest?: string; image?: Image }
type Image = { name: string; tag?: string }

/** Every input, read once, validated and typed. Nothing downstream reads inputs. */
export interface Settings extends Omit<ReportingSettings, 'error'> {
  /** The API key; never printed. */
  apiKey: string
  /** Always ending in "/". */
  baseUrl: URL
  change: ChangeFields
  /** Whether to add the run's GitHub metadata to custom_metadata. */
  githubMetadata: boolean
  /** Whether to add OpenTelemetry's names (`otel`) to custom_metadata. */
  otelAttributes: boolean
  heartbeatId?: string
  dryRun: boolean
  timeoutSeconds: number
  maxAttempts: number
  /** The events input, raw (one JSON event, a JSON array, or NDJSON). */
  events?: string
  eventsFile?: string
  eventIds?: string[]
  changeId?: string
  /** The token for read calls to GitHub's API ('' when none); never printed. */
  githubToken: string
  /** Whether to look up what the change ships (commits and pull requests). */
  includeCommits: boolean
  /** GitHub's API, or the checkout (`include-commits: git`; always on the command line). */
  commitsFrom: 'api' | 'git'
  /** The previous deploy's commit SHA, tag or branch, when the user knows it. */
  previousVersion?: string
  /** Several services in one step (a monorepo): each recorded when its paths changed. */
  services?: ServiceSpec[]
  /** How the job ended, as the runner fills in job-status for the post step. */
  jobStatus: EventOutcome
  /** The labels the action adds, the risk categories, the issue keys and what the deploy fixes. */
  triage: TriageSettings
}

/** A process's environment, as a door reads it: every other layer gets values, never this. */
export type Env = Record<string, string | undefined>

/** Returns the raw input (trimmed), or '' when it was not given. */
export type GetInput = (name: string) => string

/**
 * The literal defaults, as action.yml gives them: what a setting given empty means too, as when
 * it is not given (a reusable workflow passes '' for an input its caller left out). The command
 * line's flags default to the same.
 */
export const SETTING_DEFAULTS: Partial<Record<InputName, string>> = {
  command: 'change',
  'github-metadata': 'true',
  'fail-on-error': 'auto',
  'dry-run': 'false',
  'timeout-seconds': '30',
  'max-attempts': '4',
  'job-summary': 'true',
  'include-commits': 'true',
  'record-at': 'now',
  'auto-labels': 'true',
  'issue-keys': 'auto',
  'otel-attributes': 'true'
}

/** One service of the `services` input. */
export interface ServiceSpec {
  /** As sent in the change's `service` field. */
  name: string
  /** Globs relative to the repository root; a leading "!" excludes. None: always recorded. */
  patterns: string[]
  /** The 1-based line of the input it came from, for messages. */
  line: number
}

/**
 * The issue-keys setting: `auto` (keys in capitals, of any prefix but those that number
 * standards), the prefixes listed (in any case), or none.
 */
export type IssueKeyMode = 'auto' | 'none' | { prefixes: readonly string[] }

/** How the `issue-keys`, `risk-paths` and `remediates` inputs ask for triage. */
export interface TriageSettings {
  issueKeys: IssueKeyMode
  /** The categories of `risk-paths`; the built-in ones when absent. */
  riskPaths?: ServiceSpec[]
  /** What the deploy fixes, as the user names it: a change id or a version. */
  remediates?: string
  /** Whether labels are added to the user's. */
  autoLabels: boolean
}
