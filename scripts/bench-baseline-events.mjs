// The streaming baseline: a minimal sequential batch sender. It reads the NDJSON file line by line
// and POSTs batches of at most 1000 events and 1,000,000 bytes, one request at a time.
import { createReadStream } from 'node:fs'
import { request } from 'node:https'
import { createInterface } from 'node:readline'

const MAX_EVENTS = 1000
const MAX_BYTES = 1_000_000
const url = new URL('v2/stream', process.env.BASE_URL)

function post(body) {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-ndjson', 'X-Service-ApiKey': process.env.API_KEY }
    })
    req.on('error', reject)
    req.on('response', response => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', chunk => {
        text += chunk
      })
      response.on('end', () =>
        response.statusCode === 202 ? resolve(JSON.parse(text)) : reject(new Error(text))
      )
    })
    req.end(body)
  })
}

let lines = []
let bytes = 0
let sent = 0
for await (const line of createInterface({ input: createReadStream(process.argv[2]) })) {
  if (line.trim() === '') continue
  const size = Buffer.byteLength(line) + 1
  if (lines.length === MAX_EVENTS || bytes + size > MAX_BYTES) {
    sent += (await post(lines.join('\n') + '\n')).length
    lines = []
    bytes = 0
  }
  lines.push(line)
  bytes += size
}
if (lines.length > 0) sent += (await post(lines.join('\n') + '\n')).length
console.log(sent)
