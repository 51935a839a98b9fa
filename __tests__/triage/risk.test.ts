import { describe, expect, it } from '@jest/globals'
import { checkServiceGlobs, parseServices } from '../../src/services/definition.ts'
import {
  selectServices,
  type ChangedFiles,
  type ChangedPath
} from '../../src/services/selection.ts'
import type { ServiceSpec } from '../../src/settings.ts'
import { BUILT_IN_RISK, MAX_RISK_PATHS, riskNames, riskOf } from '../../src/triage/risk.ts'

/** The risk of the changed files, the categories matched as the services selection does. */
function riskFor(
  changed: ChangedFiles,
  categories: readonly ServiceSpec[] = BUILT_IN_RISK,
  budgetMs?: number
) {
  return riskOf(changed, selectServices(categories, changed, budgetMs))
}

function edited(...paths: string[]): ChangedPath[] {
  return paths.map(path => ({ path }))
}

/** The built-in categories a complete list of these files matches. */
function categories(...paths: string[]): string[] {
  return Object.keys(riskFor({ files: edited(...paths), complete: true }).risk ?? {})
}

describe('riskOf, built-in categories', () => {
  it('are four lines of the services grammar, valid globs, in the order they are labelled', async () => {
    const asInput = BUILT_IN_RISK.map(({ name, patterns }) => `${name}: ${patterns.join(' ')}`)
    const parsed = parseServices(asInput.join('\n')) ?? []
    expect(parsed).toEqual(BUILT_IN_RISK)
    await expect(checkServiceGlobs(parsed)).resolves.toBeUndefined()
    expect(parsed.map(spec => spec.name)).toEqual([
      'migration',
      'dependencies',
      'infrastructure',
      'ci'
    ])
  })

  it.each([
    [
      'migration',
      [
        'db/migrate/20240101_add_users.rb',
        'db/schema.rb',
        'apps/api/db/schema.rb',
        'db/analytics_schema.rb',
        'db/analytics_migrate/20240101_create_events.rb',
        'db/structure.sql',
        'shop/orders/migrations/0042_total.py',
        'src/main/resources/db/migration/V2__cart.sql',
        'src/main/java/db/migration/V3__Backfill.java',
        'sql/V4__orders.sql',
        'flyway/R__views.sql',
        'prisma/migrations/1/migration.sql',
        'prisma/schema.prisma',
        'alembic/versions/abc_add.py',
        'migrations/versions/3f2a_add.py',
        'src/main/resources/db/changelog/master.xml',
        'db.changelog-master.yaml',
        'db/liquibase/changes.yaml',
        'migrations/20240101093000_create_carts.ts',
        'db/migrations/20240503120000-add-index.js',
        'internal/store/migrations/000014_labels.up.sql'
      ]
    ],
    [
      'dependencies',
      [
        'package.json',
        'apps/web/package-lock.json',
        'yarn.lock',
        'pnpm-lock.yaml',
        'go.mod',
        'svc/go.sum',
        'go.work',
        'Cargo.toml',
        'crates/x/Cargo.lock',
        'requirements.txt',
        'requirements-dev.txt',
        'requirements/production.txt',
        'pyproject.toml',
        'poetry.lock',
        'Pipfile.lock',
        'Gemfile',
        'Gemfile.lock',
        'shop.gemspec',
        'pom.xml',
        'build.gradle',
        'app/build.gradle.kts',
        'gradle/libs.versions.toml',
        'gradle/dependencies.gradle',
        'gradle/wrapper/gradle-wrapper.properties',
        '.mvn/wrapper/maven-wrapper.properties',
        'composer.lock',
        'mix.lock',
        'src/Api/Api.csproj'
      ]
    ],
    [
      'infrastructure',
      [
        'infra/main.tf',
        'infra/prod.tfvars',
        'infra/.terraform.lock.hcl',
        'terragrunt.hcl',
        'deploy/chart/Chart.yaml',
        'charts/api/values.yaml',
        'charts/api/templates/_helpers.tpl',
        'helm/values-prod.yaml',
        'k8s/deployment.yaml',
        'ops/kubernetes/service.yml',
        'manifests/base/pdb.yaml',
        'config/deploy/production/web.yaml.erb',
        'deploy/k8s/cronjob.yaml.j2',
        'overlays/prod/kustomization.yaml',
        'Dockerfile',
        'services/api/Dockerfile.prod',
        'build/api.Dockerfile',
        'docker-compose.yml',
        'dev/docker-compose.override.yaml',
        'compose.yaml',
        'ansible/roles/web/tasks/main.yml',
        'ansible/roles/web/templates/nginx.conf.j2',
        'cdk.json',
        'cdk/lib/stack.ts',
        'Pulumi.yaml',
        'stacks/Pulumi.prod.yaml',
        'pulumi/index.ts'
      ]
    ],
    [
      'ci',
      [
        '.github/workflows/deploy.yml',
        '.github/actions/setup/action.yml',
        '.gitlab-ci.yml',
        '.gitlab/ci/deploy.yml',
        'Jenkinsfile',
        'jenkins/Jenkinsfile.release',
        '.circleci/config.yml',
        '.buildkite/pipeline.yml',
        'azure-pipelines.yml',
        'bitbucket-pipelines.yml'
      ]
    ]
  ])('match %s files at any depth', (category, paths) => {
    for (const path of paths) expect([path, categories(path)]).toEqual([path, [category]])
  })

  it('match a path holding a line break, line separator or control character as its characters would', () => {
    const paths: Array<[string, string]> = [
      ['.github/workflows/\ndeploy.yml', 'ci'],
      ['k8s/dep\nloy.yaml', 'infrastructure'],
      ['.github/actions/x\r/action.yml', 'ci'],
      ['db/migrate/0\u2028.rb', 'migration'],
      ['db/migrate/0\u2029.rb', 'migration'],
      ['infra/\u0001main.tf', 'infrastructure'],
      ['db/migrate/\n.rb', 'migration']
    ]
    for (const [path, category] of paths) {
      expect([path, categories(path)]).toEqual([path, [category]])
    }
    expect(riskFor({ files: edited(...paths.map(([path]) => path)), complete: true })).toEqual({
      risk: {
        migration: ['db/migrate/0\u2028.rb', 'db/migrate/0\u2029.rb', 'db/migrate/\n.rb'],
        infrastructure: ['k8s/dep\nloy.yaml', 'infra/\u0001main.tf'],
        ci: ['.github/workflows/\ndeploy.yml', '.github/actions/x\r/action.yml']
      },
      riskComplete: true,
      pathsRead: 7
    })
  })

  it('leave ordinary files alone', () => {
    expect(
      categories(
        'src/app.ts',
        'README.md',
        'docs/migration-guide.md',
        'docs/package.json.md',
        'src/dockerfile.ts',
        '.github/CODEOWNERS',
        '.github/dependabot.yml',
        'scripts/ci.sh',
        'CHANGELOG.md'
      )
    ).toEqual([])
  })

  it('leave source code in folders named after a tool, and queries that migrate nothing', () => {
    expect(
      categories(
        'metadata/src/main/java/io/acme/metadata/migration/ZkMigrationDriver.java',
        'app/services/migration/address_backfill.rb',
        'internal/migrate/runner.go',
        'src/migrations/runner.ts',
        'clinic/patients/management/commands/migrate_legacy_patients.py',
        'internal/store/queries/clusters.sql',
        'pkg/helm/upgrade.go',
        'internal/k8s/client.go',
        'internal/kubernetes/discovery.go',
        'pkg/deploy/rollout.go',
        'config/deploy/production.rb',
        'operator/src/main/java/io/acme/operator/k8s/PodWatcher.java',
        'src/dependencies.ts'
      )
    ).toEqual([])
  })

  it('leave what tests, fixtures and examples hold', () => {
    expect(
      categories(
        'pkg/lint/testdata/charts/locked/Chart.yaml',
        'pkg/lint/testdata/charts/locked/templates/deployment.yaml',
        'examples/compose/docker-compose.yml',
        'examples/next-app/package.json',
        'test/e2e/manifests/pod.yaml',
        'operator/src/test/resources/k8s/evicted-pod.yaml',
        'spec/fixtures/files/docker-compose.yml',
        'pkg/modules/testdata/replace/go.mod',
        'src/test/resources/db/migration/V1__fixture.sql',
        'clinic/tests/migrations/0001_initial.py',
        '__tests__/fixtures/Dockerfile'
      )
    ).toEqual([])
  })
})

describe('riskOf', () => {
  it('reads every changed path, however many: a category past the 300th path is found', () => {
    // Alphabetical, as git lists them: the Dockerfile and the Jenkinsfile come late.
    const many = Array.from(
      { length: 4630 },
      (_, i) => `clients/src/F${String(i).padStart(4, '0')}.java`
    )
    const files = edited(...many, 'docker/jvm/Dockerfile', 'Jenkinsfile', 'streams/build.gradle')
    expect(riskFor({ files, complete: true })).toEqual({
      risk: {
        dependencies: ['streams/build.gradle'],
        infrastructure: ['docker/jvm/Dockerfile'],
        ci: ['Jenkinsfile']
      },
      riskComplete: true,
      pathsRead: 4633
    })
  })

  it('labels a risk read from fewer paths than changed as incomplete, after its categories', () => {
    const read = { risk: { ci: ['Jenkinsfile'] }, riskComplete: false, pathsRead: 300 }
    expect(riskNames(read)).toEqual(['ci', 'incomplete'])
    expect(riskNames({ riskComplete: false, pathsRead: 0 })).toEqual(['incomplete'])
    expect(riskNames({ ...read, riskComplete: true })).toEqual(['ci'])
    // Nothing was asked (include-commits false): nothing is missing.
    expect(riskNames({ riskComplete: false })).toEqual([])
  })

  it('lists the first paths of each matched category, in the order of the changed list', () => {
    const sql = Array.from({ length: MAX_RISK_PATHS + 2 }, (_, i) => `db/migrate/${i}.rb`)
    const changed = { files: edited('src/a.ts', ...sql, 'go.mod'), complete: true }
    expect(riskFor(changed)).toEqual({
      risk: { migration: sql.slice(0, MAX_RISK_PATHS), dependencies: ['go.mod'] },
      riskComplete: true,
      pathsRead: 9
    })
  })

  it('matches a renamed file on either of its paths, listing its path after the change', () => {
    const files = [{ path: 'db/old/0001.sql.bak', previousPath: 'db/migrate/0001.rb' }]
    expect(riskFor({ files, complete: true })).toEqual({
      risk: { migration: ['db/old/0001.sql.bak'] },
      riskComplete: true,
      pathsRead: 1
    })
  })

  it('uses the given categories instead of the built-in ones, "!" excluding', () => {
    const custom = parseServices('payments: services/pay/** !**/*.md\ndocs\nschema: **/*.graphql')
    const changed = {
      files: edited('services/pay/charge.ts', 'services/pay/README.md', 'db/x.sql'),
      complete: true
    }
    expect(riskFor(changed, custom ?? [])).toEqual({
      risk: { payments: ['services/pay/charge.ts'] },
      riskComplete: true,
      pathsRead: 3
    })
  })

  it('matches the given categories across a line break, as the built-in ones', () => {
    const custom = parseServices('deploy: deploy/** !**/*.md')
    const changed = { files: edited('deploy/\nrun.sh', 'deploy/\r.md'), complete: true }
    expect(riskFor(changed, custom ?? [])).toEqual({
      risk: { deploy: ['deploy/\nrun.sh'] },
      riskComplete: true,
      pathsRead: 2
    })
  })

  it('is incomplete when the list was cut, and unknown when the files are', () => {
    expect(riskFor({ files: edited('go.mod'), complete: false })).toEqual({
      risk: { dependencies: ['go.mod'] },
      riskComplete: false,
      pathsRead: 1
    })
    expect(riskFor({ complete: false, reason: 'no previous deploy was found' })).toEqual({
      riskComplete: false,
      pathsRead: 0
    })
  })

  it('is unknown when matching runs out of time, as the services selection is bounded', () => {
    const slow = parseServices('slow: **/*a*a*a*a*a*a*a*b')
    const files = edited(...Array.from({ length: 5 }, () => `${'a'.repeat(64)}/`))
    expect(riskFor({ files, complete: true }, slow ?? [], 100)).toEqual({
      riskComplete: false,
      pathsRead: 5
    })
  })
})
