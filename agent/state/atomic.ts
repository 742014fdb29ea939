import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Replaces `path` with `content` so that a reader sees the old or the new file,
 * never a part: a temporary file in the same directory (same file system, so
 * the rename is atomic), written and fsynced, renamed over the target, then the
 * directory fsynced so the rename itself survives a power cut.
 */
export async function writeFileAtomic(path: string, content: string | Buffer, mode = 0o644): Promise<void> {
  const temp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(content);
    await handle.chmod(mode); // the umask may have narrowed the mode given to open
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await fsyncDir(dirname(path));
}

/** Makes renames and unlinks inside `dir` durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
