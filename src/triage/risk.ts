/**
 * Risk from the paths changed: each category is a service of the `services` grammar, matched by
 * the services selection itself (same glob rules, same time bound), which the caller runs.
 */
import { INCOMPLETE_RISK } from '../services/definition.ts'
import type { ChangedFiles, ServiceSelection } from '../services/selection.ts'
import type { ServiceSpec } from '../settings.ts'

/** A matched category lists at most this many paths. */
export const MAX_RISK_PATHS = 5

/** Tests, their data and fixtures, and examples hold files of every kind that no deploy runs. */
const NOT_DEPLOYED =
  '!**/{test,tests,testdata,fixtures,__fixtures__,__tests__,spec,e2e,example,examples,samples}/**'

/**
 * The built-in categories, as a `risk-paths` input would give them (`line` is the category's line
 * there); documented pattern by pattern in the README. A path counts by what it is (a migration
 * tool's folder and file, a manifest, a lockfile), never by a folder's name alone: source code in
 * a package named `migration`, `helm` or `k8s` is none of these.
 */
export const BUILT_IN_RISK: readonly ServiceSpec[] = Object.entries({
  migration: `**/db/*migrate/*.rb **/db/*schema.rb **/db/*structure.sql **/db/migration{,s}/**
    **/migrations/**/*.sql **/migrations/[0-9]*.{py,js,ts,cjs,mjs}
    **/{alembic,migrations}/versions/*.py **/[VU][0-9]*__*.sql **/R__*.sql **/schema.prisma
    **/db/changelog/** **/db.changelog*.{xml,yaml,yml,sql} **/liquibase/**/*.{xml,yaml,yml,sql}
    ${NOT_DEPLOYED}`,
  dependencies: `**/{package.json,package-lock.json,npm-shrinkwrap.json,yarn.lock,pnpm-lock.yaml}
    **/{go.mod,go.sum,go.work,go.work.sum} **/Cargo.{toml,lock} **/composer.{json,lock}
    **/{requirements*.txt,requirements*.in,pyproject.toml,poetry.lock,uv.lock,Pipfile,Pipfile.lock}
    **/requirements/*.{txt,in} **/{Gemfile,Gemfile.lock,*.gemspec} **/mix.{exs,lock}
    **/{pom.xml,build.gradle,build.gradle.kts,gradle.lockfile,*.versions.toml,*-wrapper.properties}
    **/gradle/dependencies.gradle **/{*.csproj,packages.lock.json,Directory.Packages.props}
    ${NOT_DEPLOYED}`,
  infrastructure: `**/*.{tf,tfvars,hcl} **/*.tf.json **/Chart.{yaml,lock} **/helmfile*.yaml
    **/{k8s,kubernetes,manifests,deploy,chart,charts,helm}/**/*.{yaml,yml,tpl,jsonnet}{,.erb,.j2,.tmpl}
    **/kustomization.{yaml,yml} **/{Dockerfile,Containerfile}{,.*} **/*.Dockerfile
    **/{docker-,}compose*.{yml,yaml} **/{ansible,playbooks}/**/*.{yml,yaml,j2,cfg,ini}
    **/ansible.cfg **/cdk.json **/cdk/** **/Pulumi*.yaml **/pulumi/** ${NOT_DEPLOYED}`,
  ci: `.github/{workflows,actions}/** **/*.gitlab-ci.yml .gitlab/ci/** **/Jenkinsfile{,.*}
    .circleci/** .buildkite/** **/azure-pipelines*.{yml,yaml} bitbucket-pipelines.yml`
}).map(([name, patterns], index) => ({ name, patterns: patterns.split(/\s+/), line: index + 1 }))

/** Why no changed path could be read, when that is no failure: the risk is unknown, not a part. */
export type RiskUnknown =
  | 'no previous deploy'
  | 'no checkout'
  | 'version is not a commit'
  | 'no token'
  | 'rollback paths not listed'

export interface Risk {
  /** Each matched category, in the categories' order: its first MAX_RISK_PATHS paths. */
  risk?: Record<string, string[]>
  /** False when the files are unknown or cut, or matching them ran out of time. */
  riskComplete: boolean
  /** The changed paths read (none: nothing was asked, or riskUnknown says why none could be). */
  pathsRead?: number
  riskUnknown?: RiskUnknown
}

/** The names a change's `risk:` labels take: the categories, then `incomplete` when it is. */
export function riskNames({ risk, riskComplete, pathsRead }: Risk): string[] {
  const incomplete = pathsRead !== undefined && !riskComplete
  return [...Object.keys(risk ?? {}), ...(incomplete ? [INCOMPLETE_RISK] : [])]
}

/**
 * The categories the changed files match, from the selection of the categories as services: a
 * renamed file matches on either path, and a category without patterns never matches.
 */
export function riskOf(changed: ChangedFiles, selection: ServiceSelection): Risk {
  const matched = selection.decisions.filter(decision => decision.matchedCount > 0)
  const riskComplete =
    changed.files !== undefined && changed.complete && selection.allRecordedBecause === undefined
  const pathsRead = changed.files?.length ?? 0
  const risk = Object.fromEntries(
    matched.map(d => [d.name, d.matchedPaths.slice(0, MAX_RISK_PATHS)])
  )
  return { ...(matched.length > 0 && { risk }), riskComplete, pathsRead }
}
