import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { PUBLIC_MODE, type RenderedFile, type RenderInputs } from '../types.js';
import { namedConf } from './named-conf.js';
import { zonePath } from './names.js';
import { zoneFile } from './zone-file.js';

/**
 * BIND 9 files of the node's DNS group: `dns/named.conf` and one
 * `dns/zones/<zone>.zone` per zone. No DNS group (`dns: null`): no files, and
 * the DNS server should be stopped (`dnsServiceWanted`).
 */

/** Whether the node should run its DNS server: only while it belongs to an enabled DNS group. */
export const dnsServiceWanted = (state: DesiredState): boolean => state.dns !== null;

export const NAMED_CONF = 'dns/named.conf';
export { zonePath };

export function renderDns(inputs: RenderInputs): RenderedFile[] {
  const dns = inputs.state.dns;
  if (dns === null) return [];
  const file = (path: string, content: string): RenderedFile => ({ path, content, mode: PUBLIC_MODE });
  return [
    file(NAMED_CONF, namedConf(dns, inputs.state.node.node_id, inputs.renderedDir)),
    ...dns.zones.map((z) => file(zonePath(z.zone), zoneFile(z, dns.group_name))),
  ];
}
