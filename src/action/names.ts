/** Names of the action's inputs, as in action.yml. Nothing else spells them. */
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
  Remediates: 'remediates'
} as const
export type InputName = (typeof Inputs)[keyof typeof Inputs]

/** Names of the action's outputs, as in action.yml. */
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
  SkippedServices: 'skipped-services'
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

/** The ranges of the numeric inputs, bounds included. */
export const TIMEOUT_SECONDS_RANGE = [1, 300] as const
export const MAX_ATTEMPTS_RANGE = [1, 10] as const
