/** The part of env-ci (which ships no types) that the command line reads. */
declare module 'env-ci' {
  /** What env-ci read; outside any CI, no name or id (`service`). For a pull request `branch` is
   * the one it merges into, `prBranch` the one it comes from. */
  export type CiEnvironment = { isCi: boolean; isPr?: boolean; pr?: string | number } & Partial<
    Record<'name' | 'service' | 'commit' | 'tag' | 'build' | 'buildUrl' | 'jobUrl', string>
  > &
    Partial<Record<'branch' | 'prBranch' | 'slug', string>>
  export default function envCi(options: { env: object; cwd: string }): CiEnvironment
}
