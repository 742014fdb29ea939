import { expect } from 'chai';
import { saveRelease, saveTarget } from '../../../infra/releases/store.js';
import { TargetVersionCache } from '../../../infra/releases/target-cache.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';

describe("TargetVersionCache (the session's agent target without a lookup)", function () {
  this.timeout(30_000);
  let sys: TestSystem;

  const release = async (version: string) => {
    await saveRelease(
      sys.pool,
      version,
      [{ filename: `dn42-agent-${version}.tgz`, sha256: '0'.repeat(64), size: 1, content: Buffer.from('x') }],
      sys.clock.now(),
    );
    expect(await saveTarget(sys.pool, version, sys.clock.now())).to.deep.equal({ outcome: 'set' });
  };

  before(async () => {
    sys = await createTestSystem();
  });
  after(async () => sys?.close());

  it('knows nothing until it has read, and then what another instance set', async () => {
    const cache = new TargetVersionCache(sys.pool, 60_000);
    expect(cache.current).to.equal(null);
    expect(cache.due).to.equal(true);
    await release('1.0.5'); // written by "another instance": this cache is not told
    expect(cache.current).to.equal(null);
    await cache.refresh();
    expect(cache.current).to.equal('1.0.5');
    expect(cache.due).to.equal(false);
  });

  it('is due again once older than its maximum age', async () => {
    const cache = new TargetVersionCache(sys.pool, 0);
    await cache.refresh();
    expect(cache.due).to.equal(true);
  });

  it('keeps a version remembered while a read was running (the read saw the older one)', async () => {
    const cache = new TargetVersionCache(sys.pool, 60_000);
    const reading = cache.refresh();
    expect(cache.due, 'a read is running').to.equal(false);
    cache.remember('1.0.6');
    await reading;
    expect(cache.current).to.equal('1.0.6');
  });
});
