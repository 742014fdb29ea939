/** Small address helpers of the new-peering form (display suggestions only: the server validates). */

/** `fe80::<last four decimal digits of the ASN>`, read as hex digits like the server does (AS4242420010: `fe80::10`). */
export function defaultLinkLocal(asn: number | null | undefined): string {
  if (asn === null || asn === undefined) return '';
  const last = String(asn).slice(-4).replace(/^0+/, '');
  return last ? `fe80::${last}` : 'fe80::';
}

function ipv4First(prefix: string): string | null {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(prefix);
  if (!m) return null;
  const len = Number(m[5]);
  const n = ((Number(m[1]) << 24) >>> 0) + (Number(m[2]) << 16) + (Number(m[3]) << 8) + Number(m[4]);
  const host = len >= 31 ? n : n + 1;
  return [host >>> 24, (host >>> 16) & 255, (host >>> 8) & 255, host & 255].join('.');
}

function ipv6First(prefix: string): string | null {
  const [addr, lenText] = prefix.split('/');
  const len = Number(lenText);
  if (!addr || !Number.isInteger(len)) return null;
  const [head, tail] = addr.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8) return null;
  const words = groups.map((g) => parseInt(g || '0', 16));
  if (len <= 127) words[7] = words[7] + 1;
  // Shortest form: the longest run of zero words becomes `::`.
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen && j - i > 1) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** The first host address of a route object's prefix (`172.20.42.0/27` → `172.20.42.1`, `fd42:4242:10::/48` → `fd42:4242:10::1`). */
export function firstAddress(prefix: string): string | null {
  return prefix.includes(':') ? ipv6First(prefix) : ipv4First(prefix);
}
