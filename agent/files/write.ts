import { readdir, rm, rmdir } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { fsyncDir, writeFileAtomic } from '../state/atomic.js';
import { makeDir, PUBLIC_DIR_MODE } from '../state/dirs.js';
import type { FilePlan } from './plan.js';
import type { FileEntry } from './snapshot.js';

/** A relative path that stays inside its directory; anything else is a renderer bug, refused before writing. */
function safeJoin(dir: string, path: string): string {
  const clean = normalize(path);
  if (clean.startsWith('..') || clean.startsWith('/') || clean === '.') throw new Error(`refusing to write outside the rendered dir: ${path}`);
  return join(dir, clean);
}

/**
 * Brings `dir` to exactly `files` as planned: each added or changed file
 * replaced atomically (temporary file, fsync, rename), then stale files removed
 * and emptied folders pruned. A reader (BIRD's `include`, `wg setconf`) sees
 * every file either old or new.
 */
export async function writeFileSet(dir: string, files: readonly FileEntry[], plan: FilePlan): Promise<void> {
  const toWrite = new Set([...plan.added, ...plan.changed]);
  const targets = files.filter((f) => toWrite.has(f.path)).map((f) => ({ file: f, target: safeJoin(dir, f.path) }));
  await makeDir(dir, PUBLIC_DIR_MODE);
  for (const { file, target } of targets) {
    await makeDir(dirname(target), PUBLIC_DIR_MODE);
    await writeFileAtomic(target, file.content, file.mode);
  }
  const touched = new Set<string>();
  for (const path of plan.removed) {
    const target = safeJoin(dir, path);
    await rm(target, { force: true });
    touched.add(dirname(target));
  }
  for (const folder of [...touched].sort((a, b) => b.length - a.length)) await pruneEmpty(folder, dir);
  if (touched.size > 0) await fsyncDir(dir);
}

/** Removes `folder` and its parents up to (not including) `root` while they are empty. */
async function pruneEmpty(folder: string, root: string): Promise<void> {
  for (let current = folder; current !== root && current.startsWith(root); current = dirname(current)) {
    try {
      if ((await readdir(current)).length > 0) return;
      await rmdir(current);
    } catch {
      return;
    }
  }
}
