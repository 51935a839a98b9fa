/**
 * Risk from the paths changed: each category is a service of the `services` grammar, matched by
 * the services selection itself (same glob rules, same time bound), which the caller runs.
 */
import type { ChangedFiles, ServiceSelection, ServiceSpec } from '../affected-services.ts'

/** A matched category lists at most this many paths. */
export const MAX_RISK_PATHS = 5

/**
 * The built-in categories, as a `risk-paths` input would give them (`line` is the category's line
 * there); documented pattern by pattern in the README.
 */
export const BUILT_IN_RISK: readonly ServiceSpec[] = Object.entries({
  migration: `**/migrations/** **/migration/** **/migrate/** **/*.sql **/db/schema.rb
    **/schema.prisma **/alembic/** **/flyway/** **/liquibase/** **/db/changelog/**`,
  dependencies: `**/package.json **/package-lock.json **/yarn.lock **/pnpm-lock.yaml **/go.mod
    **/go.sum **/Cargo.toml **/Cargo.lock **/requirements*.txt **/poetry.lock **/Pipfile.lock
    **/Gemfile.lock **/pom.xml **/build.gradle* **/composer.lock`,
  infrastructure: `**/*.tf **/*.tfvars **/*.hcl **/Chart.yaml **/charts/** **/helm/** **/k8s/**
    **/kubernetes/** **/kustomization.yaml **/kustomization.yml **/Dockerfile*
    **/docker-compose*.yml **/docker-compose*.yaml **/cdk.json **/cdk/** **/Pulumi*.yaml
    **/pulumi/**`,
  ci: '.github/workflows/** .github/actions/**'
}).map(([name, patterns], index) => ({ name, patterns: patterns.split(/\s+/), line: index + 1 }))

export interface Risk {
  /** Each matched category, in the categories' order: its first MAX_RISK_PATHS paths. */
  risk?: Record<string, string[]>
  /** False when the files are unknown or cut, or matching them ran out of time. */
  riskComplete: boolean
}

/**
 * The categories the changed files match, from the selection of the categories as services: a
 * renamed file matches on either path, and a category without patterns never matches.
 */
export function riskOf(changed: ChangedFiles, selection: ServiceSelection): Risk {
  const matched = selection.decisions.filter(decision => decision.matchedCount > 0)
  const riskComplete =
    changed.files !== undefined && changed.complete && selection.allRecordedBecause === undefined
  if (matched.length === 0) return { riskComplete }
  return {
    risk: Object.fromEntries(matched.map(d => [d.name, d.matchedPaths.slice(0, MAX_RISK_PATHS)])),
    riskComplete
  }
}
