import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** One file of a rendered set: `path` relative to the set's directory, `/`-separated. */
export interface FileEntry {
  path: string;
  content: string;
  mode: number;
}

/** The files under `dir` by relative path (empty when `dir` does not exist); leftover `.*.tmp` files count as files to remove. */
export async function readFileSet(dir: string): Promise<Map<string, FileEntry>> {
  const files = new Map<string, FileEntry>();
  const walk = async (current: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(current);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const name of names.sort()) {
      const full = join(current, name);
      const info = await stat(full);
      if (info.isDirectory()) await walk(full);
      else {
        const path = relative(dir, full).split(sep).join('/');
        files.set(path, { path, content: await readFile(full, 'utf8'), mode: info.mode & 0o777 });
      }
    }
  };
  await walk(dir);
  return files;
}
