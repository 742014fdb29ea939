import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { PROJECT_ROOT, SOURCE_ROOTS, sourceFiles, svelteScripts, violations, type SourceFile } from './import-rules.js';

/** A synthetic file set: path -> text. */
const files = (set: Record<string, string>): SourceFile[] => Object.entries(set).map(([path, text]) => ({ path, text }));

describe('import rules of the architecture', () => {
  it('hold for every source file of the work tree', () => {
    const tree = sourceFiles(PROJECT_ROOT);
    expect(tree.length).to.be.above(300);
    expect(tree.map((f) => f.path)).to.include.members(['domain/doorbell.ts', 'commands/fleet-write.ts', 'cli/system.ts', 'http/control/app.ts']);
    expect(violations(tree)).to.deep.equal([]);
  });

  it('know every folder that the typecheck compiles, spec/ aside, so a new top folder needs its rules first', () => {
    const { include } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] };
    // `web/` is compiled in part here (its build and the esbuild pages), the rest by svelte-check.
    const tops = new Set(include.map((entry) => entry.split('/')[0]).filter((folder) => folder !== 'spec'));
    expect([...SOURCE_ROOTS].sort()).to.deep.equal([...tops].sort());
  });

  it('refuse web/ importing the services, from a script or a Svelte component, and allow its generated API types', () => {
    const tree = files({
      'web/build.ts': `import { swapIn } from '../http/identity/page-build.js';`,
      'web/shared/api.ts': `import type { paths } from '../../.build/generated/control-api.js';\nimport type { PublicMap } from '../../domain/public/map.js';`,
    });
    tree.push({
      path: 'web/console/SignIn.svelte',
      text: svelteScripts(`<script lang="ts">\n  import { powSource } from '../../http/identity/page/captcha.js';\n</script>\n<p>sign in</p>`),
    });
    expect(violations(tree)).to.deep.equal([
      'web/build.ts imports http/identity/page-build.ts: web/ may import web/, domain/',
      'web/console/SignIn.svelte imports http/identity/page/captcha.ts: web/ may import web/, domain/',
    ]);
  });

  it('refuse commands/ importing http/, by value or by type', () => {
    const found = violations(
      files({
        'commands/notify.ts': `import type { ServiceContext } from '../http/shared/context.js';\nimport { getNode } from '../projections/fleet/queries.js';`,
        'commands/identity/passkeys.ts': `import { HttpError } from '../../http/shared/errors.js';`,
      }),
    );
    expect(found).to.deep.equal([
      'commands/notify.ts imports http/shared/context.ts: commands/ may import commands/, domain/, infra/, projections/',
      'commands/identity/passkeys.ts imports http/shared/errors.ts: commands/ may import commands/, domain/, infra/, projections/',
    ]);
  });

  it('refuse infra/ importing commands/, http/ or projections/, and allow the composition root cli/ all of them', () => {
    const found = violations(
      files({
        'infra/doorbell.ts': `import type { Doorbell } from '../commands/doorbell.js';`,
        'infra/agent-hub/presence.ts': `export { type ServiceContext } from '../../http/shared/context.js';`,
        'infra/jobs/watch.ts': `const q = await import('../../projections/fleet/queries.js');`,
        'cli/system.ts': `import { createControlApp } from '../http/control/app.js';\nimport { createAccount } from '../commands/accounts.js';\nimport { allProjections } from '../projections/index.js';`,
      }),
    );
    expect(found).to.deep.equal([
      'infra/doorbell.ts imports commands/doorbell.ts: infra/ may import infra/, domain/',
      'infra/agent-hub/presence.ts imports http/shared/context.ts: infra/ may import infra/, domain/',
      'infra/jobs/watch.ts imports projections/fleet/queries.ts: infra/ may import infra/, domain/',
    ]);
  });

  it('refuse any layer but bench/ importing the composition root, and the agent importing the server', () => {
    const found = violations(
      files({
        'http/control/app.ts': `import { stateMigrations } from '../../cli/migrations.js';`,
        'infra/db/migrate.ts': `import type { OpenOptions } from '../../cli/system.js';`,
        'agent/daemon.ts': `import { PgDoorbell } from '../infra/doorbell.js';\nimport type { DesiredState } from '../domain/desired-state/schema.js';`,
        'bench/run.ts': `import { startSystem } from '../cli/system.js';\nimport { testSystem } from '../spec/support/system.js';`,
      }),
    );
    expect(found).to.deep.equal([
      'http/control/app.ts imports cli/migrations.ts: http/ may import http/, commands/, projections/, domain/, infra/, web/',
      'infra/db/migrate.ts imports cli/system.ts: infra/ may import infra/, domain/',
      'agent/daemon.ts imports infra/doorbell.ts: agent/ may import agent/, domain/',
    ]);
  });

  it('refuse domain/ importing a package with I/O or a layer above it, and allow its pure packages', () => {
    const found = violations(
      files({
        'domain/node/decide.ts': `import pg from 'pg';\nimport { readFile } from 'node:fs/promises';\nimport { Type } from '@sinclair/typebox';\nimport ipaddr from 'ipaddr.js';\nimport { createHash } from 'node:crypto';`,
        'domain/dns/records.ts': `import type { Queryable } from '../../infra/db/pool.js';`,
      }),
    );
    expect(found).to.deep.equal([
      'domain/node/decide.ts imports pg: domain/ may import only @sinclair/typebox, ajv, ajv-formats, ipaddr.js, node:crypto, node:util',
      'domain/node/decide.ts imports node:fs: domain/ may import only @sinclair/typebox, ajv, ajv-formats, ipaddr.js, node:crypto, node:util',
      'domain/dns/records.ts imports infra/db/pool.ts: domain/ may import domain/',
    ]);
  });

  it('keep the rooms of domain/: node/, dns/ and fleet-ops/ below desired-state/, net/ below them all', () => {
    const found = violations(
      files({
        'domain/node/decide.ts': `import { checkListenPort } from './port-policy.js';\nimport { validateDesiredState } from '../desired-state/schema.js';`,
        'domain/dns/records.ts': `import { formatIp } from '../net/ip.js';\nimport type { DesiredState } from '../desired-state/schema.js';`,
        'domain/fleet-ops/names.ts': `import { parseIp } from '../net/ip.js';\nconst m = await import('../desired-state/materialise.js');`,
        'domain/net/ip.ts': `import type { FieldError } from '../errors.js';\nimport type { LiveNode } from '../node/state.js';`,
        'domain/desired-state/materialise.ts': `import { dnsStateOf } from '../dns/desired-state.js';\nimport { takesRpki } from '../fleet-ops/agent-gate.js';\nimport type { LiveNode } from '../node/state.js';\nimport { parseIp } from '../net/ip.js';\nimport { Validation } from '../errors.js';`,
        'domain/console/internal-topology.ts': `import type { Router } from '../desired-state/schema.js';`,
      }),
    );
    expect(found).to.deep.equal([
      'domain/node/decide.ts imports domain/desired-state/schema.ts: domain/node/ may import domain/node/, domain/net/, domain/autopeering/ and the files at the top of domain/',
      'domain/dns/records.ts imports domain/desired-state/schema.ts: domain/dns/ may import domain/dns/, domain/net/, domain/node/ and the files at the top of domain/',
      'domain/fleet-ops/names.ts imports domain/desired-state/materialise.ts: domain/fleet-ops/ may import domain/fleet-ops/, domain/net/, domain/node/, domain/release/ and the files at the top of domain/',
      'domain/net/ip.ts imports domain/node/state.ts: domain/net/ may import domain/net/ and the files at the top of domain/',
    ]);
  });

  it('find import circles, type-only imports and re-exports included: the shortest loop and the other files tied to it', () => {
    const found = violations(
      files({
        'commands/identity/passkeys.ts': `import { issueSession } from './sessions.js';`,
        'commands/identity/sessions.ts': `import type { MaintainerPasskeys } from './passkeys.js';`,
        'http/identity/app.ts': `import { passkeyRoutes } from './passkeys.js';\nimport { sessionRoutes } from './session.js';`,
        'http/identity/session.ts': `import { IDENTITY_PREFIX } from './app.js';`,
        'http/identity/passkeys.ts': `import { routes } from './routes.js';`,
        'http/identity/routes.ts': `export const prefix = '/api/v1';\nexport { createIdentityApp } from './app.js';`,
        'http/identity/lone.ts': `import { passkeyRoutes } from './passkeys.js';`,
      }),
    );
    expect(found).to.have.members([
      'import circle: commands/identity/passkeys.ts -> commands/identity/sessions.ts -> commands/identity/passkeys.ts',
      'import circle: http/identity/app.ts -> http/identity/session.ts -> http/identity/app.ts (tied to it too: http/identity/passkeys.ts, http/identity/routes.ts)',
    ]);
    expect(found).to.have.length(2);
  });

  it('leave a file set that keeps every rule alone', () => {
    const found = violations(
      files({
        'domain/doorbell.ts': `import type { ReleaseFile } from './release/manifest.js';`,
        'domain/release/manifest.ts': `export interface ReleaseFile { filename: string }`,
        'infra/doorbell.ts': `import type { Doorbell } from '../domain/doorbell.js';\nimport pg from 'pg';`,
        'commands/notify.ts': `import { onlineAgentCount } from '../infra/agent-hub/presence.js';\nimport { getNode } from '../projections/fleet/queries.js';`,
        'http/control/fleet/notify.ts': `import { notifyNode } from '../../../commands/notify.js';`,
      }),
    );
    expect(found).to.deep.equal([]);
  });
});
