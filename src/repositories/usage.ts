import type { Handle, Write } from '../db/handle.js';

/** Answers by status class: 4xx leaves out 429, which has its own. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '429', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** How much of one rate-limit budget was in use at the busiest moment of a bucket. */
export interface BudgetPeak {
  /** Requests counted in the fullest window. */
  used: number;
  /** The budget at that moment (requests a window); 0 when the bucket saw no call on this budget. */
  limit: number;
}

export interface UsageBucket {
  partnerId: number;
  /** The hour's first millisecond (UTC). */
  hourStart: number;
  operation: string;
  statuses: Record<StatusClass, number>;
  /** Calls with proof (api_token or a signed URL). */
  proven: BudgetPeak;
  /** Calls with the public key alone. */
  unproven: BudgetPeak;
}

/** Rows a statement carries at most: twelve values each stays far below either dialect's limit on parameters. */
export const BUCKETS_PER_STATEMENT = 500;

/**
 * Adds buckets to what is stored, in one statement (at most BUCKETS_PER_STATEMENT of them).
 * A budget's peak and limit move together: the limit kept is the one the higher peak was seen under.
 */
export async function addUsage(db: Write, buckets: readonly UsageBucket[]): Promise<void> {
  if (buckets.length === 0) return;
  if (buckets.length > BUCKETS_PER_STATEMENT) throw new Error(`addUsage takes at most ${BUCKETS_PER_STATEMENT} buckets at once`);
  await db.kysely
    .insertInto('partner_usage')
    .values(
      buckets.map((b) => ({
        partner_id: b.partnerId,
        hour_start: b.hourStart,
        operation: b.operation,
        status_2xx: b.statuses['2xx'],
        status_3xx: b.statuses['3xx'],
        status_4xx: b.statuses['4xx'],
        status_429: b.statuses['429'],
        status_5xx: b.statuses['5xx'],
        proven_peak: b.proven.used,
        proven_limit: b.proven.limit,
        unproven_peak: b.unproven.used,
        unproven_limit: b.unproven.limit,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['partner_id', 'hour_start', 'operation']).doUpdateSet((eb) => {
        const added = (c: 'status_2xx' | 'status_3xx' | 'status_4xx' | 'status_429' | 'status_5xx') =>
          eb(eb.ref(`partner_usage.${c}`), '+', eb.ref(`excluded.${c}`));
        // CASE rather than max()/GREATEST(): the same text on both dialects.
        const higher = (peak: 'proven_peak' | 'unproven_peak', pick: 'proven_peak' | 'proven_limit' | 'unproven_peak' | 'unproven_limit') =>
          eb
            .case()
            .when(eb.ref(`excluded.${peak}`), '>', eb.ref(`partner_usage.${peak}`))
            .then(eb.ref(`excluded.${pick}`))
            .else(eb.ref(`partner_usage.${pick}`))
            .end();
        return {
          status_2xx: added('status_2xx'),
          status_3xx: added('status_3xx'),
          status_4xx: added('status_4xx'),
          status_429: added('status_429'),
          status_5xx: added('status_5xx'),
          // SET reads the stored row as it was before this update, so peak and limit are judged alike.
          proven_limit: higher('proven_peak', 'proven_limit'),
          proven_peak: higher('proven_peak', 'proven_peak'),
          unproven_limit: higher('unproven_peak', 'unproven_limit'),
          unproven_peak: higher('unproven_peak', 'unproven_peak'),
        };
      }),
    )
    .execute();
}

/** Which of these partners still exist (a flush drops the counts of one deleted since). */
export async function existingPartnerIds(db: Handle, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.kysely
    .selectFrom('partners')
    .select('id')
    .where('id', 'in', [...ids])
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** One partner's buckets from `fromHour` on, oldest first (at most operations × hours rows: the window is bounded by the caller). */
export async function usageSince(db: Handle, partnerId: number, fromHour: number): Promise<UsageBucket[]> {
  const rows = await db.kysely
    .selectFrom('partner_usage')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .where('hour_start', '>=', fromHour)
    .orderBy('hour_start')
    .orderBy('operation')
    .execute();
  return rows.map((r) => ({
    partnerId: r.partner_id,
    hourStart: Number(r.hour_start),
    operation: r.operation,
    statuses: {
      '2xx': Number(r.status_2xx),
      '3xx': Number(r.status_3xx),
      '4xx': Number(r.status_4xx),
      '429': Number(r.status_429),
      '5xx': Number(r.status_5xx),
    },
    proven: { used: Number(r.proven_peak), limit: Number(r.proven_limit) },
    unproven: { used: Number(r.unproven_peak), limit: Number(r.unproven_limit) },
  }));
}

/** Drops every bucket that started before `before`; returns how many. */
export async function deleteUsageBefore(db: Write, before: number): Promise<number> {
  const r = await db.kysely.deleteFrom('partner_usage').where('hour_start', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}
