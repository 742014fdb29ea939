import { extract, MalformedObject, type AutNum, type Contact, type KeyCert, type Mntner, type Route } from './objects.js';
import { authOptions, type VerificationOption } from './options.js';
import { parseRpsl } from './rpsl.js';
import { roasOf, type Roa } from '../rpki/roa.js';

/** One file of the registry tree, `data/<class>/<name>`. */
export interface RegistryFile {
  path: string;
  text: string;
}

/** Directories whose objects are of a class with another name (`data/dns/` holds `domain:` objects). */
const CLASS_OF_DIRECTORY: Record<string, string> = { dns: 'domain' };

/** Everything the replica loads from one commit. */
export interface RegistrySnapshot {
  autNums: AutNum[];
  mntners: Mntner[];
  contacts: Contact[];
  keyCerts: KeyCert[];
  routes: Route[];
  /** The ROAs of the route objects (`roasOf`), and how many route objects yielded none. */
  roas: Roa[];
  roasSkipped: number;
  /** PGP and SSH options of every maintainer (e-mail options depend on the ASN and are derived when read). */
  authOptions: VerificationOption[];
  /** Objects per class, plus `malformed`. */
  counts: Record<string, number>;
  malformed: { path: string; reason: string }[];
}

/**
 * Parses every object. A malformed one (bad syntax, a class that differs from its
 * directory, a key that is not what its class needs, a duplicate) is skipped and
 * counted; it never stops the load.
 */
export function buildSnapshot(files: Iterable<RegistryFile>): RegistrySnapshot {
  const snapshot: RegistrySnapshot = {
    autNums: [],
    mntners: [],
    contacts: [],
    keyCerts: [],
    routes: [],
    roas: [],
    roasSkipped: 0,
    authOptions: [],
    counts: {},
    malformed: [],
  };
  const seen = new Set<string>();
  const keyCerts = new Map<string, KeyCert>();
  for (const file of files) {
    const dirType = file.path.split('/')[1];
    try {
      const parsed = parseRpsl(file.text);
      if (!parsed.ok) throw new MalformedObject(parsed.reason);
      if (parsed.object.type !== (CLASS_OF_DIRECTORY[dirType] ?? dirType)) throw new MalformedObject(`class ${parsed.object.type} in the ${dirType} directory`);
      const extracted = extract(parsed.object);
      const key = uniqueKey(extracted);
      if (key !== null) {
        if (seen.has(key)) throw new MalformedObject(`duplicate ${key}`);
        seen.add(key);
      }
      switch (extracted.type) {
        case 'aut-num':
          snapshot.autNums.push(extracted.record);
          break;
        case 'mntner':
          snapshot.mntners.push(extracted.record);
          break;
        case 'person':
        case 'role':
          snapshot.contacts.push(extracted.record);
          break;
        case 'key-cert':
          snapshot.keyCerts.push(extracted.record);
          keyCerts.set(extracted.record.name, extracted.record);
          break;
        case 'route':
        case 'route6':
          snapshot.routes.push(extracted.record);
          break;
        case 'other':
          break;
      }
      snapshot.counts[dirType] = (snapshot.counts[dirType] ?? 0) + 1;
    } catch (err) {
      if (!(err instanceof MalformedObject)) throw err;
      snapshot.malformed.push({ path: file.path, reason: err.message });
    }
  }
  snapshot.counts.malformed = snapshot.malformed.length;
  for (const mntner of snapshot.mntners) snapshot.authOptions.push(...authOptions(mntner, keyCerts));
  ({ roas: snapshot.roas, skipped: snapshot.roasSkipped } = roasOf(snapshot.routes));
  return snapshot;
}

/** The key a table holds once; contacts share one handle space (person and role). */
function uniqueKey(extracted: ReturnType<typeof extract>): string | null {
  switch (extracted.type) {
    case 'aut-num':
      return `aut-num AS${extracted.record.asn}`;
    case 'mntner':
      return `mntner ${extracted.record.name}`;
    case 'person':
    case 'role':
      return `contact ${extracted.record.handle}`;
    case 'key-cert':
      return `key-cert ${extracted.record.name}`;
    case 'route':
    case 'route6':
      return `route ${extracted.record.prefix}`;
    case 'other':
      return null;
  }
}
