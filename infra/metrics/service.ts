import { Counter, Histogram, Registry } from 'prom-client';

type RequestLabel = 'method' | 'route' | 'status';

/** The methods a request is counted under; anything else is `other` (bounded label values). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * One service's metrics (control, identity, registry): its HTTP requests and the
 * gauges only it can read. Its `/metrics` answers this registry followed by the
 * system's (`SystemMetrics`), one exposition.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<RequestLabel>;
  private readonly seconds: Histogram<RequestLabel>;

  /** `shared`: the system's registry (`SystemMetrics`), answered after this one. */
  constructor(
    readonly name: string,
    private readonly shared: Registry,
  ) {
    this.requests = new Counter({
      name: 'dn42_http_requests_total',
      help: 'HTTP requests answered, by method, route template (never the raw path) and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.seconds = new Histogram({
      name: 'dn42_http_request_duration_seconds',
      help: 'HTTP request latency from arrival to the end of the response, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
  }

  /** One answered request; `route` is a template (`/control/v1/admin/nodes/{node_id}`), never a raw path. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method: METHODS.has(method) ? method : 'other', route, status: String(status) };
    this.requests.inc(labels);
    this.seconds.observe(labels, seconds);
  }

  readonly contentType = this.registry.contentType;

  /** The Prometheus text exposition: this service's series, then the system's. */
  async exposition(): Promise<string> {
    const own = await this.registry.metrics();
    const shared = await this.shared.metrics();
    return `${own}${own.endsWith('\n') || own === '' ? '' : '\n'}${shared}`;
  }
}
