/** Event sources and what the event pipeline makes of them, for the tests of src/events/. */
import { expect } from '@jest/globals'
import { Buffer } from 'node:buffer'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventBatches, type EventBatch } from '../../src/events/batches.ts'
import { EventsError, type EventSource } from '../../src/events/source.ts'
import { streamEvents, type StreamResult } from '../../src/events/stream.ts'
import { validateEvents } from '../../src/events/validate.ts'

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

let dir: string | undefined

/** A path in this test file's own temporary directory (removed by removeEventFiles). */
export function eventPath(name: string): string {
  dir ??= mkdtempSync(join(tmpdir(), 'cta-events-'))
  return join(dir, name)
}

export function removeEventFiles(): void {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  dir = undefined
}

export function inline(text: string): EventSource {
  return { kind: 'inline', text }
}

export function file(name: string, content: string | Buffer): EventSource & { path: string } {
  const path = eventPath(name)
  writeFileSync(path, content)
  return { kind: 'file', path }
}

export function ndjson(events: readonly unknown[]): string {
  return events.map(event => JSON.stringify(event)).join('\n')
}

/** Events with ids e1, e2, … so that the expected ids are known. */
export function numberedEvents(count: number): Array<{ id: string; name: string; data: number }> {
  return Array.from({ length: count }, (_, index) => ({
    id: `e${index + 1}`,
    name: 'deploy',
    data: index
  }))
}

/** An event whose NDJSON line, newline included, is exactly `bytes` UTF-8 bytes. */
export function eventOfBytes(
  bytes: number,
  id: string
): { id: string; name: string; data: string } {
  const empty = Buffer.byteLength(`${JSON.stringify({ id, name: 'big', data: '' })}\n`)
  return { id, name: 'big', data: 'x'.repeat(bytes - empty) }
}

export function idsInBody(bytes: Buffer): string[] {
  const body = bytes.toString('utf8')
  expect(body.endsWith('\n')).toBe(true)
  return body
    .slice(0, -1)
    .split('\n')
    .map(line => (JSON.parse(line) as { id: string }).id)
}

/** What POST /v2/stream answers: the ids it finds in the body. */
export async function echoIds(batch: EventBatch): Promise<string[]> {
  return idsInBody(batch.body)
}

export function bodyText(batch: EventBatch): string {
  return batch.body.toString('utf8')
}

export async function collectBatches(source: EventSource): Promise<EventBatch[]> {
  const batches: EventBatch[] = []
  for await (const batch of eventBatches(await validateEvents(source))) batches.push(batch)
  return batches
}

/** How many events pass 1 finds. */
export async function countEvents(source: EventSource): Promise<number> {
  return (await validateEvents(source)).total
}

/** Expects pass 1 to refuse the input (so nothing can be sent). */
export async function expectRefused(source: EventSource): Promise<EventsError> {
  const error = await validateEvents(source).then(
    () => undefined,
    (thrown: unknown) => thrown
  )
  expect(error).toBeInstanceOf(EventsError)
  return error as EventsError
}

/** Validates, then streams. */
export async function stream(
  source: EventSource,
  sendBatch: (batch: EventBatch) => Promise<readonly string[]>
): Promise<StreamResult> {
  return streamEvents(await validateEvents(source), sendBatch)
}

/** The accepted ids, parsed from the output's lines. */
export function acceptedIdsOf(result: StreamResult): string[] {
  return JSON.parse([...result.accepted.jsonLines()].join('\n')) as string[]
}
