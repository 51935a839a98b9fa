// Jest's transform for our TypeScript: Node's own type stripping. The sources use only erasable
// syntax (tsconfig's erasableSyntaxOnly), so stripping is the whole compile, and it keeps every
// line and column where it was: coverage needs no source map. Types are checked by `npm run typecheck`.
import { stripTypeScriptTypes } from 'node:module'

export default {
  process(source) {
    return { code: stripTypeScriptTypes(source, { mode: 'strip' }) }
  }
}
