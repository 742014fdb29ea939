import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { planFiles } from '../../../agent/files/plan.js';
import { readFileSet, type FileEntry } from '../../../agent/files/snapshot.js';
import { writeFileSet } from '../../../agent/files/write.js';
import { tempDir } from '../support/core.js';

const sync = async (dir: string, files: FileEntry[]) => writeFileSet(dir, files, planFiles(files, await readFileSet(dir)));

/** Everything under `dir`, hidden files included. */
async function allNames(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) out.push(join(entry.parentPath, entry.name).slice(dir.length + 1));
  return out.sort();
}

describe('agent: writing the rendered set (write-rendered)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(async () => {
    await dir.remove();
  });

  it('never lets a reader see a partly written file while files are replaced', async () => {
    const size = 4 * 1024 * 1024;
    const versions = ['a', 'b'].map((c) => c.repeat(size));
    const path = join(dir.path, 'bird/bird.conf');
    await sync(dir.path, [{ path: 'bird/bird.conf', content: versions[0], mode: 0o644 }]);
    let writing = true;
    const seen = new Set<string>();
    const reader = (async () => {
      let reads = 0;
      while (writing || reads < 20) {
        const text = await readFile(path, 'utf8');
        seen.add(text === versions[0] ? 'a' : text === versions[1] ? 'b' : `partial:${text.length}`);
        reads++;
      }
      return reads;
    })();
    for (let i = 1; i <= 30; i++) await sync(dir.path, [{ path: 'bird/bird.conf', content: versions[i % 2], mode: 0o644 }]);
    writing = false;
    expect(await reader).to.be.greaterThan(0);
    expect([...seen].filter((s) => s.startsWith('partial'))).to.deep.equal([]);
    expect(await allNames(dir.path)).to.deep.equal(['bird/bird.conf']);
  });

  it('writes modes exactly (not narrowed by the umask), removes stale files and prunes emptied folders', async () => {
    await sync(dir.path, [
      { path: 'wireguard/wg0.conf', content: 'secret\n', mode: 0o600 },
      { path: 'wireguard/wg1.conf', content: 'secret\n', mode: 0o600 },
      { path: 'dns/zones/example.zone', content: 'zone\n', mode: 0o644 },
      { path: 'bird/bird.conf', content: 'router id 1.1.1.1;\n', mode: 0o644 },
    ]);
    const previous = process.umask(0o077);
    try {
      await sync(dir.path, [
        { path: 'wireguard/wg0.conf', content: 'secret 2\n', mode: 0o600 },
        { path: 'bird/bird.conf', content: 'router id 1.1.1.2;\n', mode: 0o644 },
      ]);
    } finally {
      process.umask(previous);
    }
    expect(await allNames(dir.path)).to.deep.equal(['bird/bird.conf', 'wireguard/wg0.conf']);
    expect(existsSync(join(dir.path, 'dns'))).to.equal(false);
    expect((await stat(join(dir.path, 'bird/bird.conf'))).mode & 0o777).to.equal(0o644);
    expect((await stat(join(dir.path, 'wireguard/wg0.conf'))).mode & 0o777).to.equal(0o600);
    expect(await readFile(join(dir.path, 'wireguard/wg0.conf'), 'utf8')).to.equal('secret 2\n');
  });

  it('leaves files it does not change alone (same inode) and removes leftover temporary files', async () => {
    await sync(dir.path, [
      { path: 'a.conf', content: 'a\n', mode: 0o644 },
      { path: 'b.conf', content: 'b\n', mode: 0o644 },
    ]);
    const inode = (await stat(join(dir.path, 'a.conf'))).ino;
    await writeFile(join(dir.path, '.0123abcd.tmp'), 'crash leftover');
    const plan = planFiles(
      [
        { path: 'a.conf', content: 'a\n', mode: 0o644 },
        { path: 'b.conf', content: 'B\n', mode: 0o644 },
      ],
      await readFileSet(dir.path),
    );
    expect(plan).to.deep.equal({ added: [], changed: ['b.conf'], removed: ['.0123abcd.tmp'], unchanged: 1 });
    await sync(dir.path, [
      { path: 'a.conf', content: 'a\n', mode: 0o644 },
      { path: 'b.conf', content: 'B\n', mode: 0o644 },
    ]);
    expect((await stat(join(dir.path, 'a.conf'))).ino).to.equal(inode);
    expect(await allNames(dir.path)).to.deep.equal(['a.conf', 'b.conf']);
  });

  it('refuses a path outside the rendered dir before writing anything', async () => {
    await mkdir(join(dir.path, 'rendered'));
    const files = [
      { path: 'ok.conf', content: 'x', mode: 0o644 },
      { path: '../escape.conf', content: 'x', mode: 0o644 },
    ];
    let error: Error | undefined;
    try {
      await sync(join(dir.path, 'rendered'), files);
    } catch (err) {
      error = err as Error;
    }
    expect(error?.message).to.equal('refusing to write outside the rendered dir: ../escape.conf');
    expect(existsSync(join(dir.path, 'escape.conf'))).to.equal(false);
  });
});
