// Failure counters in fixed windows (services/throttle.ts holds the rules).
import type { Handle, Write } from '../db/handle.js';

export async function findThrottle(db: Handle, key: string): Promise<{ count: number; expires_at: number } | undefined> {
  return db.kysely.selectFrom('throttles').select(['count', 'expires_at']).where('key', '=', key).executeTakeFirst();
}

/** Counts one failure: an expired window starts over at one (ending at `expires`), a live one counts up. */
export async function countFailure(db: Write, key: string, now: number, expires: number): Promise<void> {
  await db.kysely
    .insertInto('throttles')
    .values({ key, count: 1, expires_at: expires })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet((eb) => ({
        count: eb
          .case()
          .when('throttles.expires_at', '<=', now)
          .then(1)
          .else(eb('throttles.count', '+', 1))
          .end(),
        expires_at: eb.case().when('throttles.expires_at', '<=', now).then(expires).else(eb.ref('throttles.expires_at')).end(),
      })),
    )
    .execute();
}

export async function deleteThrottle(db: Write, key: string): Promise<void> {
  await db.kysely.deleteFrom('throttles').where('key', '=', key).execute();
}
