/**
 * Where what a change ships is read, as a door describes it in plain data: the run's GitHub API,
 * or the checkout's history. Either lookup is loaded only when a change looks up what it ships.
 */
import type { GitLookupOptions } from './git-lookup.ts'
import type { LookupOptions, Shipped } from './types.ts'

/** The lookup's options but what the change itself gives: its version, environment and signal. */
export type LookupSource =
  | { from: 'github'; options: Omit<LookupOptions, 'version' | 'environment' | 'signal'> }
  | { from: 'git'; options: Omit<GitLookupOptions, 'version' | 'signal'> }

/** What `version` (in `environment`) ships; a failure is a warning, never thrown. */
export async function lookUpShipped(
  source: LookupSource,
  { version, environment }: { version: string; environment?: string },
  signal?: AbortSignal
): Promise<{ shipped?: Shipped; warning?: string }> {
  if (source.from === 'git') {
    const { lookUpInCheckout } = await import('./git-lookup.ts')
    return lookUpInCheckout({ ...source.options, version, signal })
  }
  const { lookUpWithGitHub } = await import('./github-lookup.ts')
  return lookUpWithGitHub({ ...source.options, version, environment, signal })
}
