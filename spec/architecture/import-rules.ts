import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Ts from 'typescript';

/** Required, not imported: an ESM import of the 9 MB CommonJS file first scans all of it for export names (a second or more). */
const ts: typeof Ts = createRequire(import.meta.url)('typescript');

/**
 * The import rules of docs/architecture.md, checked over the TypeScript imports
 * (static, `import type`, re-exports and dynamic `import()`, as `ts.preProcessFile`
 * reads them): which layer may import which, which domain folder may import which
 * (`DOMAIN_MAY_IMPORT`), which packages `domain/` may use, and no import circle
 * between source files.
 */

/** A layer is a top folder; `cli/` is the composition root. */
export type Layer = 'domain' | 'commands' | 'projections' | 'http' | 'agent' | 'infra' | 'cli' | 'bench' | 'lab' | 'web';

/** Which layers each layer may import (its own included). `bench/`, `lab/` and `spec/` may import anything. */
export const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  domain: ['domain'],
  commands: ['commands', 'domain', 'infra', 'projections'],
  projections: ['projections', 'domain', 'infra'],
  // `web/files.ts`: where the browser builds lie, for the services that serve them; `web/site/`: the map drawing the home site bakes.
  http: ['http', 'commands', 'projections', 'domain', 'infra', 'web'],
  agent: ['agent', 'domain'],
  infra: ['infra', 'domain'],
  cli: ['cli', 'http', 'commands', 'projections', 'domain', 'infra'],
  // `bench/lab.ts` measures the lab.
  bench: ['bench', 'lab', 'cli', 'http', 'commands', 'projections', 'domain', 'infra', 'agent'],
  // The lab (`npm run lab`, issue 29): the whole system on one machine, like bench/.
  lab: ['lab', 'bench', 'cli', 'http', 'commands', 'projections', 'domain', 'infra', 'agent'],
  // The browser pages and their one build (`web/build.ts`): pure domain code only; `.svelte` files are read by their scripts.
  web: ['web', 'domain'],
};

/**
 * The rooms inside `domain/`: which other domain folders a folder may import (its
 * own folder and the shared files at the top, `errors.ts`, `decider.ts`, ..., always).
 * `desired-state/` sits on top of `node/`, `dns/` and `fleet-ops/`, and `net/`
 * (addresses, ports, their schema formats) at the bottom. A folder not named here
 * may import any domain folder.
 */
export const DOMAIN_MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  net: [],
  // `autopeering/policy.ts`: a node's autopeering policy is one of its fields.
  node: ['net', 'autopeering'],
  dns: ['net', 'node'],
  'fleet-ops': ['net', 'node', 'release'],
  'desired-state': ['net', 'node', 'dns', 'fleet-ops'],
};

/** The domain folder of a path (`node` for `domain/node/decide.ts`), undefined for the shared files at the top of `domain/`. */
export function domainRoomOf(path: string): string | undefined {
  const parts = path.split('/');
  return parts[0] === 'domain' && parts.length > 2 ? parts[1] : undefined;
}

/** The only packages `domain/` may import: schemas, address arithmetic, hashing. Nothing with I/O. */
export const DOMAIN_PACKAGES: readonly string[] = ['@sinclair/typebox', 'ajv', 'ajv-formats', 'ipaddr.js', 'node:crypto', 'node:util'];

/** The folders read from the work tree; `spec/` is not a layer (it may import everything). */
export const SOURCE_ROOTS: readonly string[] = ['domain', 'commands', 'projections', 'http', 'agent', 'infra', 'cli', 'bench', 'lab', 'web'];

/** A source file by its path from the project root (`commands/notify.ts`) and its text. */
export interface SourceFile {
  path: string;
  text: string;
}

/** One import: from a file to a project file (`target`, resolved) or to a package (`pkg`). */
export type Import = { from: string; target: string } | { from: string; pkg: string };

const folderOf = (layer: Layer): string => `${layer}/`;

export function layerOf(path: string): Layer | undefined {
  if (path.startsWith('web/')) return 'web';
  const top = path.split('/')[0];
  return (SOURCE_ROOTS as string[]).includes(top) ? (top as Layer) : undefined;
}

/** `../x.js` from `commands/a.ts` is `x.ts`: NodeNext specifiers name the emitted file. */
function resolveRelative(from: string, specifier: string, known: ReadonlySet<string>): string {
  const joined = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [joined.replace(/\.js$/, '.ts'), joined.replace(/\.mjs$/, '.mts'), joined];
  return candidates.find((c) => known.has(c)) ?? candidates[0];
}

/** `@scope/name/sub` is `@scope/name`; `name/sub` is `name`; `node:fs` stays. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

export function importsOf(files: readonly SourceFile[]): Import[] {
  const known = new Set(files.map((f) => f.path));
  const imports: Import[] = [];
  for (const file of files) {
    for (const { fileName } of ts.preProcessFile(file.text, true, true).importedFiles) {
      imports.push(
        fileName.startsWith('.') ? { from: file.path, target: resolveRelative(file.path, fileName, known) } : { from: file.path, pkg: packageOf(fileName) },
      );
    }
  }
  return imports;
}

/** Every broken rule, one sentence each; empty when the files keep them all. */
export function violations(files: readonly SourceFile[]): string[] {
  const imports = importsOf(files);
  const found: string[] = [];
  for (const i of imports) {
    const from = layerOf(i.from);
    if (!from) continue;
    if ('pkg' in i) {
      if (from === 'domain' && !DOMAIN_PACKAGES.includes(i.pkg))
        found.push(`${i.from} imports ${i.pkg}: domain/ may import only ${DOMAIN_PACKAGES.join(', ')}`);
      continue;
    }
    const to = layerOf(i.target);
    const allowed = to === undefined ? outsideLayers(from, i.target) : MAY_IMPORT[from].includes(to);
    if (!allowed) found.push(`${i.from} imports ${i.target}: ${folderOf(from)} may import ${MAY_IMPORT[from].map(folderOf).join(', ')}`);
    else if (from === 'domain' && to === 'domain') {
      const [room, target] = [domainRoomOf(i.from), domainRoomOf(i.target)];
      const rooms = room === undefined ? undefined : DOMAIN_MAY_IMPORT[room];
      if (rooms && target !== undefined && target !== room && !rooms.includes(target)) {
        const may = [room, ...rooms].map((r) => `domain/${r}/`).join(', ');
        found.push(`${i.from} imports ${i.target}: domain/${room}/ may import ${may} and the files at the top of domain/`);
      }
    }
  }
  for (const { cycle, files: tied } of circles(
    files.map((f) => f.path),
    imports,
  )) {
    const others = tied.filter((f) => !cycle.includes(f));
    found.push(`import circle: ${[...cycle, cycle[0]].join(' -> ')}${others.length > 0 ? ` (tied to it too: ${others.join(', ')})` : ''}`);
  }
  return found;
}

/** Imports of files outside every layer: `bench/` and `lab/` may use the specs' support, `web/` the control API's generated types. */
function outsideLayers(from: Layer, target: string): boolean {
  if (from === 'bench' || from === 'lab') return target.startsWith('spec/');
  return from === 'web' && target.startsWith('.build/generated/');
}

/**
 * Files that import each other in a loop: each strongly connected component
 * (Tarjan, iterative) with its files sorted and one shortest cycle through its first file.
 */
export function circles(paths: readonly string[], imports: readonly Import[]): { cycle: string[]; files: string[] }[] {
  const edges = new Map<string, string[]>(paths.map((p) => [p, []]));
  for (const i of imports) if ('target' in i && edges.has(i.target) && i.target !== i.from) edges.get(i.from)!.push(i.target);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const work: { node: string; next: number }[] = [];
  const enter = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    work.push({ node, next: 0 });
  };
  for (const start of [...edges.keys()].sort()) {
    if (index.has(start)) continue;
    enter(start);
    while (work.length > 0) {
      const top = work[work.length - 1];
      const targets = edges.get(top.node)!;
      if (top.next < targets.length) {
        const t = targets[top.next++];
        if (!index.has(t)) enter(t);
        else if (onStack.has(t)) low.set(top.node, Math.min(low.get(top.node)!, index.get(t)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) !== index.get(top.node)) continue;
      const component: string[] = [];
      let n: string;
      do {
        n = stack.pop()!;
        onStack.delete(n);
        component.push(n);
      } while (n !== top.node);
      if (component.length > 1) components.push(component);
    }
  }
  return components.map((c) => ({ cycle: cycleThrough(new Set(c), edges), files: c.sort() }));
}

/** A shortest way from the component's first file back to itself, inside the component. */
function cycleThrough(component: ReadonlySet<string>, edges: ReadonlyMap<string, string[]>): string[] {
  const first = [...component].sort()[0];
  const previous = new Map<string, string>();
  const queue = [first];
  while (queue.length > 0) {
    const n = queue.shift()!;
    for (const t of edges.get(n)!) {
      if (!component.has(t) || previous.has(t)) continue;
      previous.set(t, n);
      if (t === first) {
        const cycle = [n];
        while (cycle[0] !== first) cycle.unshift(previous.get(cycle[0])!);
        return cycle;
      }
      queue.push(t);
    }
  }
  return [...component].sort();
}

/** The scripts of a Svelte component (`<script>` and `<script module>`), which is where its imports are. */
export const svelteScripts = (text: string): string => [...text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]).join('\n');

/** The project's source files (`.ts`, `.mts`, `.mjs`, and the scripts of `.svelte` files, under the source roots), paths from `root`. */
export function sourceFiles(root: string): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|mts|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
        files.push({ path: relative(root, full).split('\\').join('/'), text: readFileSync(full, 'utf8') });
      else if (entry.name.endsWith('.svelte'))
        files.push({ path: relative(root, full).split('\\').join('/'), text: svelteScripts(readFileSync(full, 'utf8')) });
    }
  };
  for (const top of SOURCE_ROOTS) walk(join(root, top));
  return files;
}

/** The project root, two folders above this file. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
