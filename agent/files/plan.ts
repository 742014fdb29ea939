import type { FileEntry } from './snapshot.js';

/** What writing a rendered set would change in a directory, paths sorted. */
export interface FilePlan {
  added: string[];
  changed: string[];
  removed: string[];
  unchanged: number;
}

/** Compares the wanted files with what the directory holds; a different mode counts as a change. */
export function planFiles(wanted: readonly FileEntry[], current: ReadonlyMap<string, FileEntry>): FilePlan {
  const plan: FilePlan = { added: [], changed: [], removed: [], unchanged: 0 };
  const wantedPaths = new Set<string>();
  for (const file of wanted) {
    wantedPaths.add(file.path);
    const now = current.get(file.path);
    if (!now) plan.added.push(file.path);
    else if (now.content !== file.content || now.mode !== file.mode) plan.changed.push(file.path);
    else plan.unchanged++;
  }
  for (const path of current.keys()) if (!wantedPaths.has(path)) plan.removed.push(path);
  plan.added.sort();
  plan.changed.sort();
  plan.removed.sort();
  return plan;
}

export const hasChanges = (plan: FilePlan): boolean => plan.added.length + plan.changed.length + plan.removed.length > 0;
