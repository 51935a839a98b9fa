/** An unsigned JWT with these claims, as the runner's token endpoint would give one (signature aside). */
export function jwtWith(claims: unknown): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJlLW5vdC1jaGVja2Vk`
}
