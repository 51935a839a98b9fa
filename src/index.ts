// The same bundle runs as the main step and as the post step. The post step of a run that
// recorded at once has nothing to do: it decides that from its state alone, before loading the
// toolkit or the service client, since every job that uses the action pays for it.
import { isPostStep, readJobEndState } from './action/post-state.ts'

if (!isPostStep(process.env)) {
  await (await import('./main.ts')).run()
} else {
  const jobEnd = readJobEndState(process.env)
  if (jobEnd !== undefined) await (await import('./main.ts')).runPost(jobEnd)
}
