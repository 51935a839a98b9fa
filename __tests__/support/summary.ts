/** A job summary as GitHub renders it (GFM), read the way a person reads it. */
import { micromark } from 'micromark'
import { gfm, gfmHtml } from 'micromark-extension-gfm'

export interface RenderedSummary {
  html: string
  /** The text of the h2: the summary's title. */
  title: string
  /** Each block under the title, in order: a table's h3 text, or a paragraph's text. */
  blocks: string[]
  /** The text of every table cell (<td>). */
  cells: string[]
  links: Array<{ text: string; href: string }>
}

/** Text as the reader sees it: tags out, the entities micromark writes decoded. */
function textOf(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
}

export function renderSummary(markdown: string): RenderedSummary {
  const html = micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()] })
  const all = (pattern: RegExp): string[] => [...html.matchAll(pattern)].map(m => textOf(m[1]))
  return {
    html,
    title: all(/<h2>([\s\S]*?)<\/h2>/g)[0] ?? '',
    blocks: all(/<(?:h3|p)>([\s\S]*?)<\/(?:h3|p)>/g),
    cells: all(/<td>([\s\S]*?)<\/td>/g),
    links: [...html.matchAll(/<a href="([^"]*)">([\s\S]*?)<\/a>/g)].map(m => ({
      href: m[1],
      text: textOf(m[2])
    }))
  }
}
