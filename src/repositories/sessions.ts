// Ending sessions from the services (the site's own session handling is in src/site/session.ts).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

type Q = Kysely<Database> | Transaction<Database>;

/** Ends every session of the account but `keepSessionId` (the browser that made the change), if given. */
export async function endOtherSessions(db: Q, userRef: number, keepSessionId: string | null): Promise<void> {
  let q = db.deleteFrom('sessions').where('user_ref', '=', userRef);
  if (keepSessionId) q = q.where('id', '!=', keepSessionId);
  await q.execute();
}
