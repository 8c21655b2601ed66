import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  /** The recorder of one route pattern (or 'unmatched'): what the onResponse hooks call. */
  forRoute(route: string): RouteMetrics;
}

export interface RouteMetrics {
  record(method: string, status: number, seconds: number): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'idsvc_' });
  // Labels use the route pattern, never the URL, so no identifier or secret becomes a label.
  const requests = new Counter({ name: 'idsvc_http_requests_total', help: 'HTTP requests by route pattern and status', labelNames: ['route', 'method', 'status'], registers: [registry] });
  const duration = new Histogram({
    name: 'idsvc_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern',
    labelNames: ['route', 'method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  return {
    registry,
    // Every request records two series. Resolving a series from its labels hashes them each time,
    // so each route keeps the children it has used, by method and status: a map lookup instead.
    forRoute(route) {
      const series = new Map<string, { count: Counter.Internal; time: Histogram.Internal<'route' | 'method'> }>();
      return {
        record(method, status, seconds) {
          const key = method + status;
          let s = series.get(key);
          if (!s) {
            s = { count: requests.labels(route, method, String(status)), time: duration.labels(route, method) };
            series.set(key, s);
          }
          s.count.inc();
          s.time.observe(seconds);
        },
      };
    },
  };
}
