import { Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  /** The recorder of one route pattern (or 'unmatched'): what the onResponse hooks call. */
  forRoute(route: string): RouteMetrics;
}

export interface RouteMetrics {
  record(method: string, status: number, seconds: number): void;
}

const REQUESTS = 'idsvc_http_requests_total';
const DURATION = 'idsvc_http_request_duration_seconds';
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

/** One line of the exposition, as prom-client's registry formats it. */
interface MetricValue {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** One route and method: its request count by status and its duration histogram. */
interface Series {
  route: string;
  method: string;
  byStatus: Map<number, number>;
  /** Non-cumulative counts per bucket; the last slot is +Inf. Made cumulative when scraped. */
  buckets: number[];
  count: number;
  sum: number;
}

// Why not prom-client's Counter and Histogram: every observation, even through a `labels()` child,
// validates and hashes its labels again, on the path of every answer. Here each route's
// hook holds its series and an observation is a few additions; prom-client's registry still
// formats the exposition, so /metrics reads exactly as before.
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'idsvc_' });
  const all: Series[] = [];

  // Labels use the route pattern, never the URL, so no identifier or secret becomes a label.
  registry.registerMetric(
    collected(
      REQUESTS,
      'HTTP requests by route pattern and status',
      'counter',
      () =>
        all.flatMap((s) =>
          [...s.byStatus].map(([status, value]): MetricValue => ({ labels: { route: s.route, method: s.method, status: String(status) }, value })),
        ),
      () => {
        for (const s of all) s.byStatus.clear();
      },
    ),
  );
  registry.registerMetric(
    collected(
      DURATION,
      'HTTP request duration by route pattern',
      'histogram',
      () =>
        all.flatMap((s) => {
          const labels = { route: s.route, method: s.method };
          let cumulative = 0;
          const values: MetricValue[] = s.buckets.map((n, i) => {
            cumulative += n;
            return { metricName: `${DURATION}_bucket`, labels: { le: i < BUCKETS.length ? BUCKETS[i]! : '+Inf', ...labels }, value: cumulative };
          });
          values.push({ metricName: `${DURATION}_sum`, labels, value: s.sum }, { metricName: `${DURATION}_count`, labels, value: s.count });
          return values;
        }),
      () =>
        all.forEach((s) => {
          s.buckets.fill(0);
          s.count = 0;
          s.sum = 0;
        }),
    ),
  );

  return {
    registry,
    forRoute(route) {
      const byMethod = new Map<string, Series>();
      return {
        record(method, status, seconds) {
          let s = byMethod.get(method);
          if (!s) {
            s = { route, method, byStatus: new Map(), buckets: new Array<number>(BUCKETS.length + 1).fill(0), count: 0, sum: 0 };
            byMethod.set(method, s);
            all.push(s);
          }
          s.byStatus.set(status, (s.byStatus.get(status) ?? 0) + 1);
          let i = 0;
          while (i < BUCKETS.length && seconds > BUCKETS[i]!) i++;
          s.buckets[i]!++;
          s.count++;
          s.sum += seconds;
        },
      };
    },
  };
}

type Collected = Parameters<Registry['registerMetric']>[0];

/** A metric the registry formats from values gathered at scrape time. */
function collected(name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue[], reset: () => void): Collected {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, values: values(), aggregator: 'sum' }),
    reset,
  };
  // The registry accepts any object shaped like its metrics; its type names only its own classes.
  return metric as unknown as Collected;
}
