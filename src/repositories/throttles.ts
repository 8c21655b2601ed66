// Failure counters in fixed windows (services/throttle.ts holds the rules).
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export async function findThrottle(db: Kysely<Database>, key: string): Promise<{ count: number; expires_at: number } | undefined> {
  return db.selectFrom('throttles').select(['count', 'expires_at']).where('key', '=', key).executeTakeFirst();
}

/** Counts one failure: an expired window starts over at one (ending at `expires`), a live one counts up. */
export async function countFailure(db: Kysely<Database>, key: string, now: number, expires: number): Promise<void> {
  await db
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

export async function deleteThrottle(db: Kysely<Database>, key: string): Promise<void> {
  await db.deleteFrom('throttles').where('key', '=', key).execute();
}
