// Preloaded with --import by the benchmark: writes the process's peak RSS (KiB) to $RSS_FILE on exit.
import { writeFileSync } from 'node:fs'

process.on('exit', () => {
  if (process.env.RSS_FILE)
    writeFileSync(process.env.RSS_FILE, String(process.resourceUsage().maxRSS))
})
