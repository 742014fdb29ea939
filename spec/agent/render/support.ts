import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { validateDesiredState, type DesiredState } from '../../../domain/desired-state/schema.js';
import { renderAll, type RenderedFile, type RenderInputs } from '../../../agent/render/index.js';

/** Test keys made by `wg genkey` / `wg genpsk` (test-only, never used on a node). */
export const PRIVATE_KEYS = {
  fra1: 'SOGdWCJyfqTOl2+WLORn3KtLc9uwH0K91jpgTAIxLno=',
  ber1: '6OBWyYYB8EaGm1BIHp1piKaqiTiBIkORGiEy9QW14WU=',
  ams1: 'CB9fPxiYq2YrwPbOfpLIQ7DWUUiGevN4rXeuKdmLu2w=',
  other: '0D+xvEG9Hf/TorY36XLzVl7D0fKpu4ufNpiwo/Pg8XY=',
} as const;
export const PSK = 'bunqB6zt+TOrOAr7GMrqg+/PWeh1gkGNaNjx1xNtDiQ=';
/** A syntactically valid public key made of one letter. */
export const key = (letter: string): string => `${letter.repeat(42)}A=`;

/** The rendered dir snapshots are taken with (a node's default). */
export const SNAPSHOT_DIR = (nodeId: string) => `/var/lib/dn42-control/nodes/${nodeId}/rendered`;

/** A desired state through the real schema: defaults filled in, and a document that fails it fails the test. */
export function desired(doc: unknown): DesiredState {
  const copy = structuredClone(doc);
  const result = validateDesiredState(copy);
  if (!result.ok) expect.fail(`invalid desired state: ${JSON.stringify(result.errors)}`);
  return copy as DesiredState;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a real program; resolves with its exit code and output whatever the code. */
export function run(program: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(program, args, { timeout: 15_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

/** A fresh temp dir removed after `body`. */
export async function inTempDir<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'dn42-render-'));
  try {
    return await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function writeRendered(dir: string, files: RenderedFile[]): Promise<void> {
  for (const f of files) {
    await mkdir(dirname(join(dir, f.path)), { recursive: true });
    await writeFile(join(dir, f.path), f.content, { mode: f.mode });
  }
}

/** Renders `inputs` into a temp dir (as its rendered dir) and hands the dir and files to `body`. */
export function renderedInTempDir<T>(inputs: Omit<RenderInputs, 'renderedDir'>, body: (dir: string, files: RenderedFile[]) => Promise<T>): Promise<T> {
  return inTempDir(async (dir) => {
    const files = renderAll({ ...inputs, renderedDir: dir });
    await writeRendered(dir, files);
    return body(dir, files);
  });
}

/** `bird -p -c <file>`: BIRD parses the configuration (and its includes) and exits. */
export async function expectBirdAccepts(confPath: string): Promise<void> {
  const r = await run('bird', ['-p', '-c', confPath]);
  expect(r, `bird -p -c ${confPath}: ${r.stderr}`).to.include({ code: 0 });
}

/**
 * `wg setconf <absent interface> <file>` parses the file before it looks for the
 * device. A parse error prints `Line unrecognized`/`Configuration parsing error`;
 * a good file gets as far as the kernel: `Unable to modify interface` with
 * `No such device` (WireGuard module loaded) or `Protocol not supported` (none).
 */
export async function expectWgParses(confPath: string): Promise<void> {
  const r = await run('wg', ['setconf', 'dn42absent0', confPath]);
  expect(r.stderr, `wg setconf ${confPath}`).to.match(/^Unable to modify interface: (No such device|Protocol not supported)\n?$/);
  expect(r.code).to.equal(1);
}

/** `update` rewrites the snapshots: `UPDATE_SNAPSHOTS=1 npx mocha spec/agent/render/...`. */
const UPDATE = process.env.UPDATE_SNAPSHOTS === '1';

/** Every file of a render as one text, each under a `==> path (mode) <==` line. */
export const snapshotText = (files: RenderedFile[]): string =>
  files.map((f) => `==> ${f.path} (${f.mode.toString(8).padStart(4, '0')}) <==\n${f.content}`).join('\n');

/** Compares with `__snapshots__/<name>.txt`; a missing snapshot fails (write it with UPDATE_SNAPSHOTS=1). */
export async function expectSnapshot(name: string, files: RenderedFile[]): Promise<void> {
  const path = new URL(`./__snapshots__/${name}.txt`, import.meta.url);
  const text = snapshotText(files);
  if (UPDATE) {
    await writeFile(path, text);
    return;
  }
  const stored = await readFile(path, 'utf8').catch(() => expect.fail(`no snapshot ${name}.txt; run with UPDATE_SNAPSHOTS=1 to write it`));
  expect(text, `snapshot ${name}`).to.equal(stored);
}
