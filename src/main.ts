import { githubRunner } from './runner.ts'
import { Redactor } from './redact.ts'

export async function run(): Promise<void> {
  const r = new Redactor()
  githubRunner.info(r.redact('hello'))
}
