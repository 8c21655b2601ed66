// Installation-wide values kept in the database (one row per key).
import type { Handle, Write } from '../db/handle.js';

/** The value under `key`, written as `initial` first when there is none: every instance ends up with the first writer's value. */
export async function settingOrInit(db: Write, key: string, initial: string): Promise<string> {
  await db.kysely
    .insertInto('settings')
    .values({ key, value: initial })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.kysely.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return row.value;
}

export async function readSetting(db: Handle, key: string): Promise<string | undefined> {
  const row = await db.kysely.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function writeSetting(db: Write, key: string, value: string): Promise<void> {
  await db.kysely
    .insertInto('settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
