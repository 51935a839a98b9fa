export const REDACTED = '***'

/**
 * Removes secrets from text before it is printed, written to an output or a summary, or put in
 * an error. Each secret is also removed in the forms a server might echo it back in.
 */
export class Redactor {
  private readonly forms: string[] = []

  add(secret: string): void {
    if (!secret) return
    const variants = [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]
    for (const form of variants) if (form && !this.forms.includes(form)) this.forms.push(form)
    // Longest first, so that a secret that contains another is removed whole.
    this.forms.sort((a, b) => b.length - a.length)
  }

  redact(text: string): string {
    let result = text
    for (const form of this.forms) {
      // Checked first: most text holds no secret, and split/join would copy it anyway.
      if (result.includes(form)) result = result.split(form).join(REDACTED)
    }
    return result
  }
}
