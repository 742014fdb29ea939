import { createRequire } from 'node:module';
import type Ts from 'typescript';
import { importsOf, type SourceFile } from './import-rules.js';

/** Required, not imported: see import-rules.ts. */
const ts: typeof Ts = createRequire(import.meta.url)('typescript');

/**
 * Rules of issue 31 ("each layer in its room") for http/, beside the layer table
 * of import-rules.ts: http/ answers requests and runs no SQL of its own (the
 * statements live with the tables' owners, in projections/ and infra/), and a
 * face of the control service (console `ui/`, portal `portal/`, admin API
 * `routing/`, ...) does not reach into the console's view builders.
 */

/** The one file of http/ that may hold SQL: the health probe's `SELECT 1` (`/healthz` proves the database answers). */
export const SQL_ALLOWED_IN_HTTP: readonly string[] = ['http/shared/healthz.ts'];

/** A statement in a string or template literal: uppercase keywords, as the project writes SQL (an HTTP method name alone is not one). */
const STATEMENT = /\bSELECT\s[\s\S]*?\bFROM\b|\bSELECT\s+\d|\bINSERT\s+INTO\b|\bUPDATE\s+[\w.]+\s+SET\b|\bDELETE\s+FROM\b|\bWITH\s+\w+\s+AS\s*\(/;

/** The literal text of a string or template (substitutions as `$`), or undefined for any other node. */
function literalText(node: Ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join('$');
  return undefined;
}

/** Every SQL statement or `.query(...)` call in http/ outside the health probe, one sentence each with its line. */
export function sqlInHttp(files: readonly SourceFile[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    if (!file.path.startsWith('http/') || SQL_ALLOWED_IN_HTTP.includes(file.path)) continue;
    const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const at = (node: Ts.Node) => `${file.path}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
    const visit = (node: Ts.Node): void => {
      const text = literalText(node);
      if (text !== undefined && STATEMENT.test(text))
        found.push(`${at(node)} holds SQL: http/ runs none but the health probe; its queries live in projections/ or infra/`);
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'query')
        found.push(`${at(node)} calls .query(): http/ runs no SQL but the health probe; its queries live in projections/ or infra/`);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The console's own view builders. A view that more than one face shows lives in `http/control/shared/`. */
export const CONSOLE_VIEWS = 'http/control/ui/views/';

/**
 * Imports of console views from other faces that are still to move (the
 * portal's flap views, which lean on the console's `ui/flaps/sessions.ts`), as `from -> target`. The list only
 * shrinks: a pair no longer imported fails its spec until it is struck off.
 */
export const CONSOLE_VIEW_IMPORTS_LEFT: readonly string[] = [
  'http/control/portal/view-flaps.ts -> http/control/ui/views/flap-peers.ts',
  'http/control/portal/view-flaps.ts -> http/control/ui/views/prefix-flaps.ts',
];

/** Every import of `http/control/ui/views/` from a file of http/ outside `http/control/ui/`, as `from -> target`. */
export function consoleViewImports(files: readonly SourceFile[]): string[] {
  const pairs = new Set<string>();
  for (const i of importsOf(files)) {
    if (!('target' in i) || !i.target.startsWith(CONSOLE_VIEWS)) continue;
    if (i.from.startsWith('http/') && !i.from.startsWith('http/control/ui/')) pairs.add(`${i.from} -> ${i.target}`);
  }
  return [...pairs].sort();
}

/** The console-view imports of other faces that the list of those left does not name, one sentence each. */
export function faceViolations(files: readonly SourceFile[]): string[] {
  return consoleViewImports(files)
    .filter((pair) => !CONSOLE_VIEW_IMPORTS_LEFT.includes(pair))
    .map(
      (pair) =>
        `${pair.replace(' -> ', ' imports ')}: only http/control/ui/ imports the console's views; a view other faces show lives in http/control/shared/`,
    );
}
