/** How the apps write numbers, sizes, rates and times: units always, the viewer's zone, UTC on hover. */

const nf = (digits: number) => new Intl.NumberFormat(undefined, { maximumFractionDigits: digits });

/** `1,234` (null: `—`). */
export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : nf(0).format(n);
}

/** A number with up to `digits` decimals (null: `—`). */
export function num(n: number | null | undefined, digits = 1): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '—' : nf(digits).format(n);
}

const BYTE_UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];

function scaled(n: number, units: readonly string[], step = 1000): string {
  let i = 0;
  let v = Math.abs(n);
  while (v >= step && i < units.length - 1) {
    v /= step;
    i++;
  }
  return `${n < 0 ? '-' : ''}${nf(v < 10 && i > 0 ? 2 : v < 100 && i > 0 ? 1 : 0).format(v)} ${units[i]}`;
}

/** Bytes: `1.23 MB` (decimal units). */
export function bytes(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : scaled(n, BYTE_UNITS);
}

/** Bytes per second: `1.23 MB/s`. */
export function rate(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : `${scaled(n, BYTE_UNITS)}/s`;
}

/** Milliseconds: `12.3 ms`. */
export function ms(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : `${nf(n < 10 ? 2 : 1).format(n)} ms`;
}

/** A duration in seconds: `3 h 12 min`, `45 s`. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

const localFmt = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
const shortFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

export function toDate(t: string | number | Date): Date {
  return t instanceof Date ? t : typeof t === 'number' ? new Date(t < 1e12 ? t * 1000 : t) : new Date(t);
}

/** A time in the viewer's zone (`Nov 26, 2026, 03:12:09`). */
export function localTime(t: string | number | Date | null | undefined, short = false): string {
  if (t === null || t === undefined || t === '') return '—';
  const d = toDate(t);
  return Number.isNaN(d.getTime()) ? String(t) : (short ? shortFmt : localFmt).format(d);
}

/** The same time in UTC (`2026-11-26 03:12:09 UTC`), for the hover title. */
export function utcTime(t: string | number | Date | null | undefined): string {
  if (t === null || t === undefined || t === '') return '';
  const d = toDate(t);
  return Number.isNaN(d.getTime()) ? '' : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** `5 min ago`, `in 2 h` (relative to `now`). */
export function ago(t: string | number | Date | null | undefined, now = Date.now()): string {
  if (t === null || t === undefined || t === '') return 'never';
  const d = toDate(t).getTime();
  if (Number.isNaN(d)) return String(t);
  const s = (now - d) / 1000;
  return s >= 0 ? `${duration(s)} ago` : `in ${duration(-s)}`;
}

/** `AS4242420000` with its name when known. */
export function asn(n: number | null | undefined, name?: string | null): string {
  if (n === null || n === undefined) return '—';
  return name ? `AS${n} (${name})` : `AS${n}`;
}
