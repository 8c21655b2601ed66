// Installation-wide values kept in the database (one row per key).
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** The value under `key`, written as `initial` first when there is none: every instance ends up with the first writer's value. */
export async function settingOrInit(db: Kysely<Database>, key: string, initial: string): Promise<string> {
  await db
    .insertInto('settings')
    .values({ key, value: initial })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return row.value;
}

export async function readSetting(db: Kysely<Database>, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function writeSetting(db: Kysely<Database>, key: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
