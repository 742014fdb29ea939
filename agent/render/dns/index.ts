import type { DesiredState } from '../../../domain/desired-state/schema.js';
import type { RenderedFile, RenderInputs } from '../types.js';

/** Whether the node should run its DNS server: only while it belongs to an enabled DNS group. */
export const dnsServiceWanted = (state: DesiredState): boolean => state.dns !== null;

export function renderDns(_inputs: RenderInputs): RenderedFile[] {
  return [];
}
