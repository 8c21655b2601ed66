// The catalogue table. Every change bumps `catalogue_version` so running servers notice a CLI edit
// without a restart (see services/catalogue-cache.ts).
import type { Handle, Write } from '../db/handle.js';
import type { ServiceRow } from '../db/schema.js';
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import { isUrlBuilder } from '../catalogue/profile-url.js';

export function rowToEntry(r: ServiceRow): CatalogueEntry {
  return {
    svcId: r.svc_id,
    svcName: r.svc_name,
    svcURL: r.svc_url,
    svcLeftURL: r.left_url,
    svcRightURL: r.right_url,
    svcMobileURL: r.mobile_url,
    svcIphoneURL: r.iphone_url,
    svcFavicon: r.favicon,
    svcIcon: r.icon,
    svcIphoneIcon: r.iphone_icon,
    regexCheck: r.regex_check,
    urlBuilder: r.url_builder && isUrlBuilder(r.url_builder) ? r.url_builder : null,
    disabled: r.disabled === 1,
  };
}

function entryToRow(e: CatalogueEntry, now: number): ServiceRow {
  return {
    svc_id: e.svcId,
    svc_name: e.svcName,
    sort_name: e.svcName.toLowerCase(),
    svc_url: e.svcURL,
    left_url: e.svcLeftURL,
    right_url: e.svcRightURL,
    mobile_url: e.svcMobileURL,
    iphone_url: e.svcIphoneURL,
    favicon: e.svcFavicon,
    icon: e.svcIcon,
    iphone_icon: e.svcIphoneIcon,
    regex_check: e.regexCheck,
    url_builder: e.urlBuilder,
    disabled: e.disabled ? 1 : 0,
    updated_at: now,
  };
}

export async function catalogueVersion(db: Handle): Promise<string> {
  const row = await db.kysely.selectFrom('settings').select('value').where('key', '=', 'catalogue_version').executeTakeFirst();
  return row?.value ?? '0';
}

async function bumpVersion(db: Write, now: number): Promise<void> {
  const value = `${now}-${Math.random().toString(36).slice(2, 10)}`;
  await db.kysely
    .insertInto('settings')
    .values({ key: 'catalogue_version', value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

export async function listCatalogue(db: Handle, includeDisabled = true): Promise<CatalogueEntry[]> {
  let q = db.kysely.selectFrom('services').selectAll().orderBy('svc_id');
  if (!includeDisabled) q = q.where('disabled', '=', 0);
  return (await q.execute()).map(rowToEntry);
}

export async function countServices(db: Handle): Promise<number> {
  const r = await db.kysely
    .selectFrom('services')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Inserts or replaces entries; returns how many were new and how many changed. */
export async function upsertServices(w: Write, entries: CatalogueEntry[], now: number): Promise<{ added: number; updated: number }> {
  const existing = new Set((await w.kysely.selectFrom('services').select('svc_id').execute()).map((r) => r.svc_id));
  let added = 0;
  let updated = 0;
  for (const e of entries) {
    const row = entryToRow(e, now);
    const { svc_id: _id, ...rest } = row;
    await w.kysely
      .insertInto('services')
      .values(row)
      .onConflict((oc) => oc.column('svc_id').doUpdateSet(rest))
      .execute();
    if (existing.has(e.svcId)) updated++;
    else added++;
  }
  await bumpVersion(w, now);
  return { added, updated };
}

export async function setServiceDisabled(db: Write, svcId: string, disabled: boolean, now: number): Promise<boolean> {
  const r = await db.kysely
    .updateTable('services')
    .set({ disabled: disabled ? 1 : 0, updated_at: now })
    .where('svc_id', '=', svcId)
    .executeTakeFirst();
  await bumpVersion(db, now);
  return Number(r.numUpdatedRows) > 0;
}

/** Opted-in users per service (SPEC §4.2), as the triggers of migration 005 keep them. */
export async function popularityCounts(db: Handle): Promise<Map<string, number>> {
  const rows = await db.kysely.selectFrom('service_popularity').select(['svc_id', 'user_count']).where('user_count', '>', 0).execute();
  return new Map(rows.map((r) => [r.svc_id, Number(r.user_count)]));
}
