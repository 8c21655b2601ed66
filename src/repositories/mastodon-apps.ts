// The app registered with each Mastodon server (migration 022).
import type { Handle, Write } from '../db/handle.js';

export interface MastodonApp {
  clientId: string;
  clientSecret: string;
}

/** The app registered with `server` for this callback address, if any. */
export async function findMastodonApp(db: Handle, server: string, redirectUri: string): Promise<MastodonApp | undefined> {
  const row = await db.kysely
    .selectFrom('mastodon_apps')
    .select(['client_id', 'client_secret'])
    .where('server', '=', server)
    .where('redirect_uri', '=', redirectUri)
    .executeTakeFirst();
  return row && { clientId: row.client_id, clientSecret: row.client_secret };
}

/**
 * Keeps the app just registered with `server`, replacing one registered for another callback
 * address. Of two registrations at once, the first stored stays: both apps work, one is enough.
 */
export async function keepMastodonApp(db: Write, server: string, redirectUri: string, app: MastodonApp, now: number): Promise<void> {
  await db.kysely.deleteFrom('mastodon_apps').where('server', '=', server).where('redirect_uri', '!=', redirectUri).execute();
  await db.kysely
    .insertInto('mastodon_apps')
    .values({ server, client_id: app.clientId, client_secret: app.clientSecret, redirect_uri: redirectUri, created_at: now })
    .onConflict((oc) => oc.column('server').doNothing())
    .execute();
}
