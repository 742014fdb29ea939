import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logger.js';

export interface Sample<L extends string> {
  labels: Partial<Record<L, string>>;
  value: number;
}

/**
 * A gauge read at scrape time (a query, a count of live objects) instead of kept
 * up to date by every writer. Each scrape replaces all samples, so a label that
 * no longer exists (a removed projection) disappears. A failed read leaves the
 * gauge without samples for that scrape and logs a warning: the rest of
 * `/metrics` still answers while the database is down.
 */
export function sampledGauge<L extends string>(
  registry: Registry,
  log: Logger,
  spec: { name: string; help: string; labelNames?: readonly L[]; read: () => Promise<readonly Sample<L>[]> | readonly Sample<L>[] },
): Gauge<L> {
  return new Gauge<L>({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
    async collect() {
      let samples: readonly Sample<L>[];
      try {
        samples = await spec.read();
      } catch (err) {
        this.reset();
        log.warn({ err, metric: spec.name }, 'metrics: a gauge could not be read');
        return;
      }
      this.reset();
      for (const s of samples) this.set(s.labels, s.value);
    },
  });
}
