import { createRequire } from 'node:module';

/** One sample as parse-prometheus-text-format gives it (values are strings: `+Inf` stays `+Inf`). */
export interface PromSample {
  labels?: Record<string, string>;
  value?: string;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}

export interface PromFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: PromSample[];
}

const parse = (text: string) => (createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => PromFamily[])(text);

const labelKey = (labels: Record<string, string> = {}) => JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

/**
 * The Prometheus text format parsed by a parser that is not ours (prom2json's
 * output), by family name. That parser folds every label set of a histogram into
 * one sample, so histograms are read a second time with their `_bucket`, `_sum`
 * and `_count` lines as plain samples and regrouped by label set here.
 */
export function parsePrometheus(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>();
  const histograms = new Map<string, Map<string, PromSample>>();
  for (const family of parse(text)) {
    families.set(family.name, family.type === 'HISTOGRAM' ? { ...family, metrics: [] } : family);
    if (family.type === 'HISTOGRAM') histograms.set(family.name, new Map());
  }
  for (const part of parse(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'))) {
    const [, name, suffix] = /^(.*)_(bucket|sum|count)$/.exec(part.name) ?? [];
    const groups = name === undefined ? undefined : histograms.get(name);
    if (!groups) continue;
    for (const sample of part.metrics) {
      const { le, ...labels } = sample.labels ?? {};
      const key = labelKey(labels);
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { labels, buckets: {} }));
      if (suffix === 'bucket') group.buckets![le] = sample.value!;
      else group[suffix as 'sum' | 'count'] = sample.value;
    }
  }
  for (const [name, groups] of histograms) families.get(name)!.metrics = [...groups.values()];
  return families;
}

/** The samples of a family whose labels include `labels`. */
export function samplesOf(families: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): PromSample[] {
  const family = families.get(name);
  if (!family) throw new Error(`no metric family ${name} (have: ${[...families.keys()].join(', ')})`);
  return family.metrics.filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
}
