/** One file of an agent release manifest. */
export interface ReleaseFile {
  filename: string;
  sha256: string;
  size: number;
}

/** Document 2, Other records: the agent release manifest. */
export interface ReleaseManifest {
  version: string;
  wheels: ReleaseFile[];
}
