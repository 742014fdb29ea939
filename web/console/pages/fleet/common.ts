import type { ApiError } from '../../../shared/api.js';

/** Field errors of a failed write by field path (empty when none). */
export function fieldErrors(err: ApiError | null | undefined): Record<string, string> {
  return err ? err.fieldErrors : {};
}

/** Copies text to the clipboard; false when the browser refused. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Fallback for browsers without the async clipboard (or without permission).
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    } finally {
      area.remove();
    }
  }
}

/** `""` → null, else the trimmed text. */
export const orNull = (s: string): string | null => (s.trim() === '' ? null : s.trim());

/** An integer field: `""` → null, else the number (NaN passes through for the server to refuse). */
export const intOrNull = (s: string | number | null | undefined): number | null =>
  s === null || s === undefined || String(s).trim() === '' ? null : Number(s);
