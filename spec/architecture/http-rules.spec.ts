import { expect } from 'chai';
import { PROJECT_ROOT, sourceFiles, type SourceFile } from './import-rules.js';
import { CONSOLE_VIEW_IMPORTS_LEFT, consoleViewImports, faceViolations, sqlInHttp } from './http-rules.js';

/** A synthetic file set: path -> text. */
const files = (set: Record<string, string>): SourceFile[] => Object.entries(set).map(([path, text]) => ({ path, text }));

describe('rules of http/ (issue 31: each layer in its room)', () => {
  const tree = sourceFiles(PROJECT_ROOT);

  it('find no SQL in http/ but the health probe', () => {
    expect(tree.filter((f) => f.path.startsWith('http/')).length).to.be.above(100);
    expect(sqlInHttp(tree)).to.deep.equal([]);
  });

  it('find SQL in strings and templates and .query() calls in http/, and leave the health probe, HTTP method names and comments alone', () => {
    const found = sqlInHttp(
      files({
        'http/control/portal/read.ts': [
          'const a = await db.query(`SELECT id FROM peerings WHERE remote_asn = ${asn}`);',
          "const b = 'INSERT INTO portal_probe_runs (id) VALUES ($1)';",
          'const c = `UPDATE nodes SET fields = $1`;',
          'const d = pool.query(b, [1]);',
        ].join('\n'),
        'http/shared/healthz.ts': "await db.query('SELECT 1');",
        'http/shared/audit.ts':
          "const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);\n// SELECT ... FROM nodes is read by projections/fleet\nconst s = 'DELETE /autopeering/requests/{id} cancels';",
        'projections/fleet/queries.ts': "await db.query('SELECT * FROM nodes');",
      }),
    );
    expect(found).to.deep.equal([
      'http/control/portal/read.ts:1 calls .query(): http/ runs no SQL but the health probe; its queries live in projections/ or infra/',
      'http/control/portal/read.ts:1 holds SQL: http/ runs none but the health probe; its queries live in projections/ or infra/',
      'http/control/portal/read.ts:2 holds SQL: http/ runs none but the health probe; its queries live in projections/ or infra/',
      'http/control/portal/read.ts:3 holds SQL: http/ runs none but the health probe; its queries live in projections/ or infra/',
      'http/control/portal/read.ts:4 calls .query(): http/ runs no SQL but the health probe; its queries live in projections/ or infra/',
    ]);
  });

  it("keep the console's views to the console: no other face imports http/control/ui/views/ beyond the pairs left to move", () => {
    expect(faceViolations(tree)).to.deep.equal([]);
  });

  it('name only console-view imports that are still there, so the list of those left shrinks', () => {
    expect(consoleViewImports(tree)).to.include.members([...CONSOLE_VIEW_IMPORTS_LEFT]);
  });

  it("refuse a face importing the console's views, by value or by type, and leave the console and http/control/shared/ alone", () => {
    const found = faceViolations(
      files({
        'http/control/portal/view-fleet.ts': "import { fleetRoutingBlock } from '../ui/views/routing.js';\nimport { x } from '../shared/routing-views.js';",
        'http/control/routing/routes.ts': "import type { Named } from '../ui/views/routing.js';",
        'http/control/ui/views/routing.ts': 'export const fleetRoutingBlock = 1;',
        'http/control/ui/routing.ts': "import { fleetRoutingBlock } from './views/routing.js';",
        'http/control/shared/routing-views.ts': 'export const x = 1;',
        'infra/cli/system.ts': "import { fleetRoutingBlock } from '../../http/control/ui/views/routing.js';",
      }),
    );
    expect(found).to.deep.equal([
      "http/control/portal/view-fleet.ts imports http/control/ui/views/routing.ts: only http/control/ui/ imports the console's views; a view other faces show lives in http/control/shared/",
      "http/control/routing/routes.ts imports http/control/ui/views/routing.ts: only http/control/ui/ imports the console's views; a view other faces show lives in http/control/shared/",
    ]);
  });
});
