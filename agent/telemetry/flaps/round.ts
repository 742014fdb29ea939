import type { Logger } from 'pino';
import type { AgentRuntime } from '../../runtime.js';
import { outputOf } from '../output.js';
import { FlapCollector } from './collector.js';

/**
 * One round of the prefix flap loop: look at BIRD (`show route all`, then
 * `show protocols all` for the import counters and session states), score what
 * changed since the previous look, and post the top scores with the feed
 * state to `/agent/prefix-flaps`, which replaces the node's table. BIRD
 * unreachable: the report still goes out, with `feed_state: down`.
 */
export function flapRounds(rt: AgentRuntime, log: Logger, post: (what: string, path: string, body: unknown) => Promise<unknown>): () => Promise<void> {
  const collector = new FlapCollector();
  let birdReadable = true;
  return async () => {
    try {
      // Routes first: a change landing between the two reads is then in the counters but not
      // the routes, and the next look counts it once (the other order can count it twice).
      const routes = await outputOf([...rt.commands.birdc, 'show', 'route', 'all'], 60_000);
      const protocols = await outputOf([...rt.commands.birdc, 'show', 'protocols', 'all']);
      const events = collector.observe({ protocols, routes }, rt.applied().desired?.node.asn ?? null, Date.now());
      if (events.length) log.debug({ changes: events.length }, 'prefix flaps: route changes seen');
      birdReadable = true;
    } catch (err) {
      // Once per outage: the runtime snapshot already warns about BIRD every round.
      if (birdReadable) log.warn({ err }, 'prefix flaps: cannot read BIRD; the feed is down');
      birdReadable = false;
      collector.lost();
    }
    await post('prefix flaps', '/agent/prefix-flaps', collector.report(rt.nodeId, Date.now()));
  };
}
