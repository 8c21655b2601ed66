import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'route' | 'method' | 'status'>;
  duration: Histogram<'route' | 'method'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'idsvc_' });
  return {
    registry,
    // Labels use the route pattern, never the URL, so no identifier or secret becomes a label.
    requests: new Counter({ name: 'idsvc_http_requests_total', help: 'HTTP requests by route pattern and status', labelNames: ['route', 'method', 'status'], registers: [registry] }),
    duration: new Histogram({
      name: 'idsvc_http_request_duration_seconds',
      help: 'HTTP request duration by route pattern',
      labelNames: ['route', 'method'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  };
}
