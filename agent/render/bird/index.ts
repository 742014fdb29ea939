import { renderedPath } from '../text.js';
import { PUBLIC_MODE, type RenderedFile, type RenderInputs } from '../types.js';
import { deviceAndDirect, header, kernels, originations } from './base.js';
import { ebgpConf, needsBfd, sessionFilters } from './ebgp.js';
import { filterFacts, filtersConf } from './filters.js';
import { hostStatics } from './hosts.js';
import { ibgpProtocols } from './ibgp.js';
import { PROTOCOL } from '../../../domain/desired-state/bird-names.js';
import { FAMILIES } from './syntax.js';
import { ospfProtocols } from './ospf.js';
import { loadsRoas, roaFile, roaStatics } from './rpki.js';

/**
 * BIRD 2 (2.0.x as in Debian 12) files of a node:
 * - `bird/bird.conf`: identity, device/direct/kernel, own prefixes; includes the others;
 * - `bird/filters.conf`: prefix sets, community and check functions, the sessions' named filters;
 * - `bird/internal.conf`: hosts, OSPF, iBGP (the fleet side);
 * - `bird/ebgp.conf`: one protocol per eBGP session;
 * - `bird/roa_v4.conf`, `bird/roa_v6.conf`: the ROA set (unless RPKI is off, `rpki.ts`).
 * `bird -p -c <rendered>/bird/bird.conf` checks them all; includes are absolute,
 * so BIRD reads the rendered dir whatever its working directory.
 */

export const BIRD_FILES = {
  main: 'bird/bird.conf',
  filters: 'bird/filters.conf',
  internal: 'bird/internal.conf',
  ebgp: 'bird/ebgp.conf',
  roa: { v4: 'bird/roa_v4.conf', v6: 'bird/roa_v6.conf' },
} as const;

const text = (lines: string[]) => `${lines.join('\n').trimEnd()}\n`;
const file = (path: string, content: string): RenderedFile => ({ path, content, mode: PUBLIC_MODE });

export function renderBird(inputs: RenderInputs): RenderedFile[] {
  const { state, renderedDir } = inputs;
  const facts = filterFacts(state);
  const include = (f: string) => `include ${renderedPath(renderedDir, f)};`;
  const main = [
    ...header(state),
    include(BIRD_FILES.filters),
    '',
    ...deviceAndDirect(),
    ...kernels(state, inputs.kernel ?? true),
    ...originations(state, facts),
    ...(needsBfd(state) ? [`protocol bfd ${PROTOCOL.bfd} {`, '}', ''] : []),
    ...roaStatics(state, include, BIRD_FILES.roa),
    include(BIRD_FILES.internal),
    include(BIRD_FILES.ebgp),
  ];
  const internal = [...hostStatics(state), ...ospfProtocols(state), ...ibgpProtocols(state, facts)];
  return [
    file(BIRD_FILES.main, text(main)),
    file(
      BIRD_FILES.filters,
      filtersConf(
        state,
        facts,
        state.bgp_sessions.flatMap((s) => sessionFilters(s, facts)),
      ),
    ),
    file(BIRD_FILES.internal, text(internal.length === 0 ? ['# No internal topology: no hosts, OSPF or iBGP.'] : internal)),
    file(BIRD_FILES.ebgp, ebgpConf(state, facts)),
    ...(loadsRoas(state) ? FAMILIES.map((f) => file(BIRD_FILES.roa[f], roaFile(f, inputs.roas ?? null))) : []),
  ];
}
