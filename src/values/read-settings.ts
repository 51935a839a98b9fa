/** A door's strings (its inputs, its flags) in, one typed Settings out, before anything is sent. */
import { InputError } from '../errors.ts'
import {
  COMMANDS,
  FAIL_ON_ERROR_MODES,
  Inputs,
  RECORD_AT_MODES,
  type GetInput,
  type InputName,
  type ReportingSettings,
  type Settings,
  SETTING_DEFAULTS
} from '../settings.ts'
import { parseArtifact } from './artifact.ts'
import { parseBaseUrl } from './base-url.ts'
import { parseCreatedAt } from './created-at.ts'
import {
  isUnevaluatedExpression,
  parseApiKey,
  parseBoolean,
  parseEventIds,
  parseId,
  parseIncludeCommits,
  parseIssueKeys,
  parseJobStatus,
  parseJson,
  parseLabels,
  parseOneOf,
  parseRef,
  parseShortId,
  parseText,
  parseToken,
  parseWholeNumber,
  parseWord
} from './parsers.ts'
import { parseServices } from '../services/definition.ts'

/** The API key and the GitHub token as given, to mask before anything, even an invalid input. */
export function readSecrets(getInput: GetInput): string[] {
  return [Inputs.ApiKey, Inputs.GithubToken]
    .map(name => getInput(name).trim())
    .filter(secret => secret !== '' && !isUnevaluatedExpression(secret))
}

/** Each setting as given, or its default when it is given empty. */
function withDefaults(getInput: GetInput): GetInput {
  return name => getInput(name) || (SETTING_DEFAULTS[name as InputName] ?? '')
}

/** An invalid reporting input is kept as `error` and read as its default: the step fails on it. */
export function readReportingSettings(given: GetInput): ReportingSettings {
  const getInput = withDefaults(given)
  let error: InputError | undefined
  const read = <T>(name: InputName, parse: (name: InputName, raw: string) => T): T => {
    try {
      return parse(name, getInput(name))
    } catch (caught) {
      // The parsers throw nothing but InputError.
      error ??= caught as InputError
      return parse(name, SETTING_DEFAULTS[name]!)
    }
  }
  return {
    command: read(Inputs.Command, (name, raw) => parseOneOf(name, COMMANDS, raw)),
    failOnError: read(Inputs.FailOnError, (name, raw) => parseWord(name, FAIL_ON_ERROR_MODES, raw)),
    jobSummary: read(Inputs.JobSummary, parseBoolean),
    recordAt: read(Inputs.RecordAt, (name, raw) => parseOneOf(name, RECORD_AT_MODES, raw)),
    ...(error && { error })
  }
}

/** Every input, typed, or the InputError of the first bad one. Pure: `now` bounds created-at. */
export function readSettings(
  given: GetInput,
  options: { now?: number; reporting?: ReportingSettings } = {}
): Settings {
  const getInput = withDefaults(given)
  const apiKey = parseApiKey(getInput(Inputs.ApiKey))
  // Refused before anything is parsed or quoted, also in the form a URL would carry it in.
  const keyForms = [apiKey, encodeURIComponent(apiKey)]
  for (const name of Object.values(Inputs)) {
    if (name !== Inputs.ApiKey && keyForms.some(form => getInput(name).includes(form))) {
      throw new InputError(
        name,
        " contains the API key's value: give the key only as the API key, since other settings may be logged or sent to the service in clear."
      )
    }
  }
  const { error, ...reporting } = options.reporting ?? readReportingSettings(getInput)
  if (error) throw error
  const text = (name: InputName, multiline = false): string | undefined =>
    parseText(name, getInput(name), multiline)
  const flag = (name: InputName): boolean => parseBoolean(name, getInput(name))
  const id = (name: InputName): string | undefined => parseId(name, getInput(name))
  const whole = (name: InputName, min: number, max: number): number =>
    parseWholeNumber(name, getInput(name), min, max)
  const events = getInput(Inputs.Events)
  const settings: Settings = {
    apiKey,
    baseUrl: parseBaseUrl(getInput(Inputs.BaseUrl)),
    change: {
      description: text(Inputs.Description, true),
      environment: text(Inputs.Environment),
      service: text(Inputs.Service),
      version: text(Inputs.Version),
      user: text(Inputs.User),
      comment: text(Inputs.Comment, true),
      team: text(Inputs.Team),
      labels: parseLabels(getInput(Inputs.Labels)),
      customMetadata: parseJson(Inputs.CustomMetadata, getInput(Inputs.CustomMetadata)),
      createdAt: parseCreatedAt(getInput(Inputs.CreatedAt), options.now ?? Date.now()),
      artifact: parseArtifact(getInput(Inputs.Artifact))
    },
    githubMetadata: flag(Inputs.GithubMetadata),
    otelAttributes: flag(Inputs.OtelAttributes),
    heartbeatId: id(Inputs.HeartbeatId),
    ...reporting,
    dryRun: flag(Inputs.DryRun),
    timeoutSeconds: whole(Inputs.TimeoutSeconds, 1, 300),
    maxAttempts: whole(Inputs.MaxAttempts, 1, 10),
    events: events.trim() === '' ? undefined : events,
    eventsFile: parseText(Inputs.EventsFile, getInput(Inputs.EventsFile).trim(), false),
    eventIds: parseEventIds(getInput(Inputs.EventIds)),
    changeId: id(Inputs.ChangeId),
    githubToken: parseToken(Inputs.GithubToken, getInput(Inputs.GithubToken)),
    ...parseIncludeCommits(getInput(Inputs.IncludeCommits)),
    previousVersion: parseRef(Inputs.PreviousVersion, getInput(Inputs.PreviousVersion)),
    services: parseServices(getInput(Inputs.Services)),
    jobStatus: parseJobStatus(getInput(Inputs.JobStatus)),
    triage: {
      autoLabels: flag(Inputs.AutoLabels),
      riskPaths: parseServices(getInput(Inputs.RiskPaths), Inputs.RiskPaths),
      issueKeys: parseIssueKeys(getInput(Inputs.IssueKeys)),
      remediates: parseShortId(Inputs.Remediates, getInput(Inputs.Remediates))
    }
  }
  checkCommandRequirements(settings)
  return settings
}

/** The inputs each command cannot do without, checked once every input is valid. */
function checkCommandRequirements(settings: Settings): void {
  const { command } = settings
  if (settings.services !== undefined && settings.change.service !== undefined) {
    throw new InputError(
      Inputs.Services,
      ` is given with "${Inputs.Service}": give "${Inputs.Service}" for one service, or list every service in "${Inputs.Services}".`
    )
  }
  if (settings.recordAt === 'job-end' && command !== 'change' && command !== 'heartbeat') {
    throw new InputError(
      Inputs.RecordAt,
      ` may be "job-end" only when command is "change" or "heartbeat"; command is "${command}": leave ${Inputs.RecordAt} at "now".`
    )
  }
  if (command === 'events' && settings.events !== undefined && settings.eventsFile !== undefined) {
    throw new InputError(
      Inputs.Events,
      ` is given with "${Inputs.EventsFile}": when command is "events", give exactly one of them.`
    )
  }
  const required: Partial<Record<typeof command, [InputName, unknown, string]>> = {
    heartbeat: [
      Inputs.HeartbeatId,
      settings.heartbeatId,
      'the id of the heartbeat monitor, from its page in the web application'
    ],
    'get-change': [Inputs.ChangeId, settings.changeId, 'the id of the change to read back'],
    'event-results': [
      Inputs.EventIds,
      settings.eventIds,
      'the event ids, separated by commas or newlines, or a JSON array'
    ],
    events: [
      Inputs.Events,
      settings.events ?? settings.eventsFile,
      `give the events inline in "${Inputs.Events}", or a path to a file of events in "${Inputs.EventsFile}"`
    ]
  }
  const [name, given, what] = required[command] ?? []
  if (name !== undefined && given === undefined) {
    throw new InputError(name, ` is required when command is "${command}": ${what}.`)
  }
}
