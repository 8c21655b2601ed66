// The arithmetic of the open-loop measurement: when each request is due, and the percentiles of
// what was recorded. Pure, so test/unit/bench-stats.test.ts checks it without a server.

/**
 * When request `i` (from 0) of a constant-rate schedule is due, in the clock's milliseconds. Latency
 * is measured from this moment, not from when the request was actually sent: a client that falls
 * behind (or a server that stalls and holds its connections) then shows as latency instead of as
 * requests that were never sent (coordinated omission).
 */
export function dueAt(startMs: number, ratePerSecond: number, i: number): number {
  return startMs + (i * 1000) / ratePerSecond;
}

/** How many requests of the schedule are due by `nowMs` (at most `total`). */
export function dueBy(startMs: number, ratePerSecond: number, nowMs: number, total: number): number {
  if (nowMs < startMs) return 0;
  return Math.min(total, Math.floor(((nowMs - startMs) * ratePerSecond) / 1000) + 1);
}

/** Nearest-rank percentile of sorted values: the smallest value at or above p % of them. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  // Less a hair, so that 99.9 % of 1,000 is rank 999 and not 1,000 through floating-point error.
  const rank = Math.ceil((p * sorted.length) / 100 - 1e-9);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface LatencySummary {
  count: number;
  min_ms: number;
  p50_ms: number;
  p99_ms: number;
  p999_ms: number;
  max_ms: number;
}

const ms = (x: number) => Math.round(x * 1000) / 1000;

/** Exact percentiles of latencies in milliseconds (sorts a copy: the caller's order is kept). */
export function summarise(latencies: Float64Array): LatencySummary {
  const sorted = Float64Array.from(latencies).sort();
  return {
    count: sorted.length,
    min_ms: ms(sorted.length ? sorted[0]! : Number.NaN),
    p50_ms: ms(percentile(sorted, 50)),
    p99_ms: ms(percentile(sorted, 99)),
    p999_ms: ms(percentile(sorted, 99.9)),
    max_ms: ms(sorted.length ? sorted[sorted.length - 1]! : Number.NaN),
  };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}
