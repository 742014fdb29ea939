/** The token of an `Authorization: Bearer <token>` header, or undefined when there is none. */
export function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}
