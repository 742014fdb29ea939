import { DEFAULT_RPKI_MODE, type DesiredState, type RpkiMode } from '../../../domain/desired-state/schema.js';
import type { RoaSet } from '../../../domain/rpki/roa.js';
import { safeComment } from '../text.js';
import { PROTOCOL } from '../../../domain/desired-state/bird-names.js';
import { FAMILIES, block, channelOf, familyOfPrefix, type Family } from './syntax.js';

/**
 * RPKI in BIRD 2, the way dn42 operators load the registry's ROA export: a
 * `roa4`/`roa6` table per family (declared in `bird/filters.conf`, whose
 * functions use them), filled by one static protocol per family in
 * `bird/bird.conf` that includes `bird/roa_v4.conf` / `bird/roa_v6.conf`
 * (`route <prefix> max <len> as <asn>;` lines). `reject_invalid` adds
 * `roa_check(...) = ROA_INVALID` to the eBGP import check; `observe` loads the
 * tables only; `off` renders none of it. Without a ROA set (none fetched yet)
 * the tables are empty: every route is ROA_UNKNOWN, nothing is rejected.
 */

export const ROA_TABLE = (f: Family): string => `dn42_roa_${f}`;

/**
 * The node's RPKI mode. The schema fills in the default when a document leaves
 * it out; a document stored by an older agent (`applied.json`) may lack it.
 */
export const rpkiModeOf = (state: DesiredState): RpkiMode => state.bird?.rpki?.mode ?? DEFAULT_RPKI_MODE;

/** Whether the node loads ROA tables at all. */
export const loadsRoas = (state: DesiredState): boolean => rpkiModeOf(state) !== 'off';

/** The table declarations, for `bird/filters.conf` (before the functions that check against them). */
export function roaTables(state: DesiredState): string[] {
  if (!loadsRoas(state)) return [];
  return [
    '# ROA tables (dn42 registry route objects), filled by the roa_v4/roa_v6 statics of bird.conf.',
    ...FAMILIES.map((f) => `${f === 'v4' ? 'roa4' : 'roa6'} table ${ROA_TABLE(f)};`),
    '',
  ];
}

/** The eBGP import check line of a family, when the mode rejects invalid routes. */
export function roaImportCheck(state: DesiredState, f: Family): string[] {
  return rpkiModeOf(state) === 'reject_invalid' ? [`if roa_check(${ROA_TABLE(f)}, net, bgp_path.last) = ROA_INVALID then return false;`] : [];
}

/** The statics that fill the ROA tables, for `bird/bird.conf`; `include` gives the quoted include line of a rendered file. */
export function roaStatics(state: DesiredState, include: (file: string) => string, files: Record<Family, string>): string[] {
  if (!loadsRoas(state)) return ['# RPKI off: no ROA tables.', ''];
  return FAMILIES.flatMap((f) => [
    ...block(`protocol static ${PROTOCOL.roa(f)}`, [`${f === 'v4' ? 'roa4' : 'roa6'} { table ${ROA_TABLE(f)}; };`, include(files[f])]),
    '',
  ]);
}

/** The text of `bird/roa_v4.conf` or `bird/roa_v6.conf`: the family's ROAs as static ROA routes. */
export function roaFile(f: Family, roas: RoaSet | null): string {
  const mine = (roas?.roas ?? []).filter((r) => familyOfPrefix(r.prefix) === f);
  const head =
    roas === null
      ? '# dn42-agent: no ROA set fetched yet; the table stays empty (every route ROA_UNKNOWN).'
      : `# dn42-agent: ${mine.length} ${channelOf(f)} ROAs of dn42 registry commit ${safeComment(roas.commit)}, rendered; the next apply overwrites it.`;
  return `${[head, ...mine.map((r) => `route ${r.prefix} max ${r.max_length} as ${r.asn};`)].join('\n')}\n`;
}
