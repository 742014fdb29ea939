/**
 * An e-mail address as the verification options show it: the first characters of
 * the local part (at most two, never more than half of it), `***`, the domain.
 * `alice@alpha.example` → `al***@alpha.example`, `a@b.example` → `***@b.example`.
 */
export function maskEmail(address: string): string {
  const trimmed = address.trim();
  const at = trimmed.lastIndexOf('@');
  if (at < 0) return '***';
  const local = trimmed.slice(0, at);
  const keep = Math.min(2, Math.floor(local.length / 2));
  return `${local.slice(0, keep)}***${trimmed.slice(at)}`;
}
