// A partner's usage over the last 30 days, as the dashboard and `idsvc partner usage` show it:
// hourly and daily (UTC) series of requests per operation, answers by status class and the peak
// use of each rate-limit budget. Hours and days without calls are there with zeros, so a chart's
// bars line up with the calendar.
import type { Db, Handle } from '../db/handle.js';
import { deleteUsageBefore, STATUS_CLASSES, usageSince, type BudgetPeak, type StatusClass, type UsageBucket } from '../repositories/usage.js';
import { HOUR_MS } from './usage-counter.js';

export const DAY_MS = 24 * HOUR_MS;
/** The days a dashboard shows. */
export const USAGE_DAYS = 30;
/** Buckets are kept a day longer than shown, so the oldest day shown is whole in every time zone. */
export const USAGE_KEPT_MS = (USAGE_DAYS + 1) * DAY_MS;

export interface UsagePoint {
  /** The hour's or day's first millisecond (UTC). */
  start: number;
  /** Requests by operation; operations without calls in the whole window are left out. */
  requests: Record<string, number>;
  total: number;
  statuses: Record<StatusClass, number>;
  /** The busiest moment of each budget in this hour or day (limit 0: no call used it). */
  proven: BudgetPeak;
  unproven: BudgetPeak;
}

export interface UsageSeries {
  /** Operations with at least one call in the window, by name. */
  operations: string[];
  /** The last `days` × 24 hours, the current one last. */
  hourly: UsagePoint[];
  /** The last `days` UTC days, today last. */
  daily: UsagePoint[];
  totals: { requests: Record<string, number>; statuses: Record<StatusClass, number>; total: number };
}

const noStatuses = (): Record<StatusClass, number> => ({ '2xx': 0, '3xx': 0, '4xx': 0, '429': 0, '5xx': 0 });

/** The share of its budget a peak used; the higher of two peaks. */
function busier(a: BudgetPeak, b: BudgetPeak): BudgetPeak {
  if (b.limit === 0) return a;
  if (a.limit === 0) return b;
  return b.used / b.limit > a.used / a.limit ? b : a;
}

function point(start: number, operations: string[]): UsagePoint {
  return {
    start,
    requests: Object.fromEntries(operations.map((o) => [o, 0])),
    total: 0,
    statuses: noStatuses(),
    proven: { used: 0, limit: 0 },
    unproven: { used: 0, limit: 0 },
  };
}

function add(p: UsagePoint, b: UsageBucket): void {
  for (const c of STATUS_CLASSES) {
    p.statuses[c] += b.statuses[c];
    p.requests[b.operation] = (p.requests[b.operation] ?? 0) + b.statuses[c];
    p.total += b.statuses[c];
  }
  p.proven = busier(p.proven, b.proven);
  p.unproven = busier(p.unproven, b.unproven);
}

/** Builds the series from stored buckets (exported for the view's tests, which check it against the table). */
export function usageSeries(buckets: readonly UsageBucket[], now: number, days = USAGE_DAYS): UsageSeries {
  const thisHour = now - (now % HOUR_MS);
  const today = now - (now % DAY_MS);
  const firstHour = thisHour - (days * 24 - 1) * HOUR_MS;
  const firstDay = today - (days - 1) * DAY_MS;
  const operations = [...new Set(buckets.filter((b) => b.hourStart >= Math.min(firstHour, firstDay)).map((b) => b.operation))].sort();
  const hourly = Array.from({ length: days * 24 }, (_, i) => point(firstHour + i * HOUR_MS, operations));
  const daily = Array.from({ length: days }, (_, i) => point(firstDay + i * DAY_MS, operations));
  const totals = { requests: Object.fromEntries(operations.map((o) => [o, 0])), statuses: noStatuses(), total: 0 };
  for (const b of buckets) {
    const h = Math.floor((b.hourStart - firstHour) / HOUR_MS);
    if (h >= 0 && h < hourly.length) add(hourly[h]!, b);
    const d = Math.floor((b.hourStart - firstDay) / DAY_MS);
    if (d >= 0 && d < daily.length) {
      add(daily[d]!, b);
      for (const c of STATUS_CLASSES) {
        totals.statuses[c] += b.statuses[c];
        totals.requests[b.operation] = (totals.requests[b.operation] ?? 0) + b.statuses[c];
        totals.total += b.statuses[c];
      }
    }
  }
  return { operations, hourly, daily, totals };
}

/** One partner's usage for the last `days` days (1 to 30) up to `now`. */
export async function partnerUsage(db: Handle, partnerId: number, now: number, days = USAGE_DAYS): Promise<UsageSeries> {
  const span = Math.min(USAGE_DAYS, Math.max(1, Math.floor(days)));
  // From a day earlier than the first day shown: the hourly series starts up to 23 hours before it.
  const today = now - (now % DAY_MS);
  return usageSeries(await usageSince(db, partnerId, today - span * DAY_MS), now, span);
}

/** Drops the buckets no dashboard shows any more. */
export async function pruneUsage(db: Db, now: number): Promise<number> {
  return db.write((w) => deleteUsageBefore(w, now - USAGE_KEPT_MS));
}
