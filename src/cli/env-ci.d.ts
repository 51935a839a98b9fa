/** The part of env-ci (which ships no types) that the command line reads. */
declare module 'env-ci' {
  /** What env-ci read from the CI's variables; each CI names a different part, or none. */
  export interface CiEnvironment {
    isCi: boolean
    /** The CI's name ("GitLab CI/CD") and id ("gitlab"); absent outside any CI. */
    name?: string
    service?: string
    commit?: string
    tag?: string
    build?: string
    buildUrl?: string
    jobUrl?: string
    /** For a pull request, the branch it merges into; `prBranch` is the one it comes from. */
    branch?: string
    pr?: string | number
    isPr?: boolean
    prBranch?: string
    slug?: string
  }
  export default function envCi(options: {
    env: Record<string, string | undefined>
    cwd: string
  }): CiEnvironment
}
