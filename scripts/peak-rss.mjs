// Preloaded with --import into the action's process by run-bundled-action.ts (measurePeakRss):
// writes its peak RSS (KiB) to $CTA_PEAK_RSS_FILE when it exits, however it exits short of a kill.
import { writeFileSync } from 'node:fs'

process.on('exit', () => {
  const file = process.env.CTA_PEAK_RSS_FILE
  if (file) writeFileSync(file, String(process.resourceUsage().maxRSS))
})
