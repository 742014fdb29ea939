import type { DesiredState } from '../../domain/desired-state/schema.js';
import type { RoaSet } from '../../domain/rpki/roa.js';

/** One rendered file; the apply step writes it atomically under the rendered dir. */
export interface RenderedFile {
  /** Relative to the rendered dir, `/`-separated: `wireguard/wg0.conf`, `bird/bird.conf`, `dns/named.conf`. */
  path: string;
  content: string;
  /** 0o600 for files that hold a private or preshared key, else 0o644. */
  mode: number;
}

/** Everything a render needs; the renderers read nothing else (no files, no clock). */
export interface RenderInputs {
  state: DesiredState;
  /** The node's WireGuard private key (base64), kept in the state dir by the agent. */
  wireguardPrivateKey: string;
  /** Absolute rendered dir: `bird.conf` and `named.conf` include their sibling files by absolute path. */
  renderedDir: string;
  /**
   * Not rendered: BIRD 2.0 takes its control socket on the command line (`bird -s`,
   * `birdc -s`), not in the configuration. Accepted so callers can pass one input object.
   */
  birdControlSocket?: string;
  /** Render the kernel protocols (default true). Off for a BIRD without access to the kernel tables (tests). */
  kernel?: boolean;
  /** The ROA set the agent holds (`agent/rpki/`); null or absent: none fetched yet, the ROA tables stay empty. */
  roas?: RoaSet | null;
  /** Preshared keys by `preshared_key_ref` (base64); see `preshared-keys.ts` for where the agent reads them. */
  presharedKeys?: Readonly<Record<string, string>>;
}

/** A document the renderer cannot turn into valid files (a missing preshared key, an unsafe path). */
export class RenderError extends Error {
  override name = 'RenderError';
}

export const SECRET_MODE = 0o600;
export const PUBLIC_MODE = 0o644;
