/**
 * Host names for every outgoing socket (the bounded request's), looked up on the event loop: the
 * hosts file, then DNS through c-ares, stopped when its route closes. Node's default (getaddrinfo
 * in libuv's thread pool) cannot be stopped: a resolver that never answers held the process for
 * minutes after its work had ended, since even process.exit waits for those threads.
 */
import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns'
import { readFileSync } from 'node:fs'
import { isIP, type LookupFunction } from 'node:net'
import { attempt } from '../errors.ts'

/** A lookup for one route, and what stops every query it has under way. */
export function stoppableLookup(hostsFile = '/etc/hosts'): {
  lookup?: LookupFunction
  stop: () => void
} {
  // Windows keeps its hosts file elsewhere, and its getaddrinfo runs no such risk of ours.
  if (process.platform === 'win32') return { stop: () => {} }
  const resolver = new dns.Resolver()
  const lookup: LookupFunction = (hostname, options, callback) => {
    const family = familyNumber(options.family)
    const answer = (found: LookupAddress[]) => {
      if (options.all) return callback(null, found)
      callback(null, found[0].address, found[0].family)
    }
    const name = hostname.toLowerCase()
    const known = fromHostsFile(name, hostsFile).filter(each => !family || each.family === family)
    if (known.length > 0) return answer(known)
    const queries = ([4, 6] as const).filter(f => !family || f === family)
    void Promise.allSettled(
      queries.map(f =>
        (f === 4 ? resolver.resolve4(name) : resolver.resolve6(name)).then(addresses =>
          addresses.map(address => ({ address, family: f }))
        )
      )
    ).then(results => {
      const found = results.flatMap(result => (result.status === 'fulfilled' ? result.value : []))
      if (found.length > 0) return answer(found)
      const codes = results.map(result => (result as PromiseRejectedResult).reason?.code)
      // A name that does not exist is a typo; any other failure (a timeout) may pass.
      const missing = codes.some(code => code === 'ENOTFOUND' || code === 'ENODATA')
      const code = missing ? 'ENOTFOUND' : 'EAI_AGAIN'
      const error = Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code, hostname })
      callback(error, '', 0)
    })
  }
  return { lookup, stop: () => resolver.cancel() }
}

/** 4 or 6 for the family a lookup asks for (by number or by name); 0 or none for either. */
function familyNumber(family: LookupOptions['family']): number | undefined {
  if (family === 'IPv4') return 4
  if (family === 'IPv6') return 6
  return family
}

/** The hosts file's addresses for a name; `localhost` and its subdomains are loopback anyway. */
function fromHostsFile(name: string, hostsFile: string): LookupAddress[] {
  // No hosts file: DNS alone.
  const text = attempt(() => readFileSync(hostsFile, 'utf8')) ?? ''
  const found: LookupAddress[] = []
  for (const line of text.split('\n')) {
    const [address = '', ...names] = line.replace(/#.*/, '').trim().split(/\s+/)
    const family = isIP(address)
    if (family && names.some(each => each.toLowerCase() === name)) found.push({ address, family })
  }
  if (found.length === 0 && (name === 'localhost' || name.endsWith('.localhost'))) {
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 }
    ]
  }
  return found
}
