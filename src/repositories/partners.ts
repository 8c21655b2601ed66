// Partners: api_key is public, api_token is stored only as a SHA-256 hash (SPEC §2, §5). Rows
// leave this module as `Partner`s, with booleans for the 0/1 columns.
import { sql } from 'kysely';
import type { Handle, Write } from '../db/handle.js';
import { statement } from '../db/prepared.js';
import type { PartnerRow } from '../db/schema.js';
import { digestsEqual, newApiKey, newApiToken, newWebhookSecret, sha256 } from '../domain/secrets.js';

type Flag = 'trusted' | 'suspended' | 'legacy_open_reads' | 'webhook_disabled' | 'token_unissued';
export type Partner = Omit<PartnerRow, Flag> & Record<Flag, boolean>;

function toPartner(row: PartnerRow): Partner {
  return {
    ...row,
    trusted: row.trusted === 1,
    suspended: row.suspended === 1,
    legacy_open_reads: row.legacy_open_reads === 1,
    webhook_disabled: row.webhook_disabled === 1,
    token_unissued: row.token_unissued === 1,
  };
}

export interface NewPartner {
  name: string;
  trusted?: boolean;
  origins?: string[];
  webhookUrl?: string | null;
  legacyOpenReads?: boolean;
  rateLimitPerMinute?: number | null;
  /** Made from an application: nobody has seen the api_token; a member issues it on the dashboard. */
  tokenUnissued?: boolean;
}

export interface CreatedPartner {
  partner: Partner;
  apiKey: string;
  apiToken: string;
}

// Writes to `partners` made in this process tell the partner cache at once (services/partner-cache.ts);
// other processes' writes reach it through the change feed (services/change-feed.ts).
const writeListeners = new Set<() => void>();

/** Calls `listener` after every write to `partners` made in this process; returns the unsubscribe. */
export function onPartnerWrite(listener: () => void): () => void {
  writeListeners.add(listener);
  return () => writeListeners.delete(listener);
}

function partnersWritten(): void {
  for (const l of writeListeners) l();
}

export async function createPartner(db: Write, input: NewPartner, now: number): Promise<CreatedPartner> {
  const apiKey = newApiKey();
  const apiToken = newApiToken();
  const partner = await db.kysely
    .insertInto('partners')
    .values({
      name: input.name,
      api_key: apiKey,
      token_hash: sha256(apiToken),
      previous_token_hash: null,
      previous_token_expires_at: null,
      trusted: input.trusted ? 1 : 0,
      suspended: 0,
      legacy_open_reads: input.legacyOpenReads ? 1 : 0,
      allowed_origins: JSON.stringify(input.origins ?? []),
      webhook_url: input.webhookUrl ?? null,
      webhook_secret: input.webhookUrl ? newWebhookSecret() : null,
      previous_webhook_secret: null,
      previous_webhook_secret_expires_at: null,
      webhook_disabled: 0,
      rate_limit_per_minute: input.rateLimitPerMinute ?? null,
      token_unissued: input.tokenUnissued ? 1 : 0,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  partnersWritten();
  return { partner: toPartner(partner), apiKey, apiToken };
}

const partnerByKey = statement<PartnerRow>('SELECT * FROM partners WHERE api_key = ?');

/**
 * The partner behind an api_key: the check every API call makes (through services/partner-cache.ts),
 * a prepared statement read outside any write (db/prepared.ts, readConnection), so it sees committed changes only.
 */
export async function findPartnerByKey(db: Handle, apiKey: string): Promise<Partner | undefined> {
  const row = await db.get(partnerByKey, apiKey);
  return row && toPartner(row);
}

/** By id (digits) or api_key, as operators type them. */
export async function findPartner(db: Handle, keyOrId: string): Promise<Partner | undefined> {
  if (/^\d+$/.test(keyOrId)) {
    const row = await db.kysely.selectFrom('partners').selectAll().where('id', '=', Number(keyOrId)).executeTakeFirst();
    return row && toPartner(row);
  }
  return findPartnerByKey(db, keyOrId);
}

export async function listPartners(db: Handle): Promise<Partner[]> {
  return (await db.kysely.selectFrom('partners').selectAll().orderBy('id').execute()).map(toPartner);
}

/** Where and how the partner's webhooks are delivered. */
export async function findWebhookTarget(db: Handle, partnerId: number) {
  const row = await db.kysely
    .selectFrom('partners')
    .select(['webhook_url', 'webhook_secret', 'previous_webhook_secret', 'previous_webhook_secret_expires_at', 'webhook_disabled'])
    .where('id', '=', partnerId)
    .executeTakeFirst();
  return row && { ...row, webhook_disabled: row.webhook_disabled === 1 };
}

export async function countPartners(db: Handle): Promise<number> {
  const row = await db.kysely
    .selectFrom('partners')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** True when the token is the current one, or the previous one within its grace period. */
export function tokenMatches(partner: Partner, token: string, now: number): boolean {
  const digest = sha256(token);
  if (digestsEqual(digest, partner.token_hash)) return true;
  return (
    partner.previous_token_hash !== null &&
    partner.previous_token_expires_at !== null &&
    now < partner.previous_token_expires_at &&
    digestsEqual(digest, partner.previous_token_hash)
  );
}

/**
 * The partner whose api_token this is, the current one or the previous one within its grace
 * period: the Bearer token of the Gravatar-compatible API names no api_key (indexes: migration 010).
 */
export async function findPartnerByToken(db: Handle, token: string, now: number): Promise<Partner | undefined> {
  const digest = sha256(token);
  const rows = await db.kysely
    .selectFrom('partners')
    .selectAll()
    .where((eb) => eb.or([eb('token_hash', '=', digest), eb('previous_token_hash', '=', digest)]))
    .execute();
  return rows.map(toPartner).find((p) => tokenMatches(p, token, now));
}

/** A new api_token for the partner; the current one keeps working for `graceSeconds`. */
export async function rotatePartnerToken(db: Write, partnerId: number, graceSeconds: number, now: number): Promise<string> {
  const current = await db.kysely.selectFrom('partners').select('token_hash').where('id', '=', partnerId).executeTakeFirstOrThrow();
  return (await replaceToken(db, partnerId, current.token_hash, graceSeconds, now)) ?? rotatePartnerToken(db, partnerId, graceSeconds, now);
}

/**
 * As rotatePartnerToken, when the current api_token is still the one `stamp` names (tokenStamp);
 * otherwise null, and nothing changes: a form sent twice (a reload) rotates once.
 */
export async function rotatePartnerTokenIfCurrent(db: Write, partnerId: number, graceSeconds: number, now: number, stamp: string): Promise<string | null> {
  const current = await db.kysely.selectFrom('partners').select('token_hash').where('id', '=', partnerId).executeTakeFirstOrThrow();
  if (stamp !== tokenStamp(current.token_hash)) return null;
  return replaceToken(db, partnerId, current.token_hash, graceSeconds, now);
}

/** Replaces the token whose digest is `currentHash`; null when another change replaced it first (the check and the change are one statement). */
async function replaceToken(db: Write, partnerId: number, currentHash: string, graceSeconds: number, now: number): Promise<string | null> {
  const apiToken = newApiToken();
  const changed = await db.kysely
    .updateTable('partners')
    .set({
      token_hash: sha256(apiToken),
      previous_token_hash: graceSeconds > 0 ? currentHash : null,
      previous_token_expires_at: graceSeconds > 0 ? now + graceSeconds * 1000 : null,
      token_unissued: 0,
      updated_at: now,
    })
    .where('id', '=', partnerId)
    .where('token_hash', '=', currentHash)
    .executeTakeFirst();
  if (Number(changed.numUpdatedRows) === 0) return null;
  partnersWritten();
  return apiToken;
}

/** Names the current api_token without revealing it (a digest of its digest), for a form to say which one it replaces. */
export function tokenStamp(tokenHash: string): string {
  return sha256(`stamp:${tokenHash}`).slice(0, 16);
}

export interface PartnerSettings {
  name?: string;
  trusted?: boolean;
  suspended?: boolean;
  legacyOpenReads?: boolean;
  origins?: string[];
  webhookUrl?: string | null;
  rateLimitPerMinute?: number | null;
}

export async function updatePartner(db: Write, partnerId: number, s: PartnerSettings, now: number): Promise<Partner> {
  const current = await db.kysely.selectFrom('partners').selectAll().where('id', '=', partnerId).executeTakeFirstOrThrow();
  const webhookChanged = s.webhookUrl !== undefined && s.webhookUrl !== current.webhook_url;
  const updated = await db.kysely
    .updateTable('partners')
    .set({
      ...(s.name !== undefined ? { name: s.name } : {}),
      ...(s.trusted !== undefined ? { trusted: s.trusted ? 1 : 0 } : {}),
      ...(s.suspended !== undefined ? { suspended: s.suspended ? 1 : 0 } : {}),
      ...(s.legacyOpenReads !== undefined ? { legacy_open_reads: s.legacyOpenReads ? 1 : 0 } : {}),
      ...(s.origins !== undefined ? { allowed_origins: JSON.stringify(s.origins) } : {}),
      ...(s.rateLimitPerMinute !== undefined ? { rate_limit_per_minute: s.rateLimitPerMinute } : {}),
      ...(webhookChanged
        ? {
            webhook_url: s.webhookUrl ?? null,
            // A new endpoint gets a secret on first configuration and is re-enabled.
            webhook_secret: s.webhookUrl ? (current.webhook_secret ?? newWebhookSecret()) : current.webhook_secret,
            webhook_disabled: 0,
          }
        : {}),
      // Setting the same URL again is how an operator re-enables an endpoint disabled after 410 Gone.
      ...(s.webhookUrl ? { webhook_disabled: 0 } : {}),
      updated_at: now,
    })
    .where('id', '=', partnerId)
    .returningAll()
    .executeTakeFirstOrThrow();
  partnersWritten();
  return toPartner(updated);
}

/**
 * A new webhook secret; the one it replaces keeps signing (beside the new one) for the grace
 * period, so the partner can move its receiver over without rejecting an event. A second rotation
 * within the grace period drops the oldest secret: only the two most recent ever sign.
 */
export async function rotateWebhookSecret(db: Write, partnerId: number, graceSeconds: number, now: number): Promise<string> {
  const secret = newWebhookSecret();
  const current = await db.kysely.selectFrom('partners').select('webhook_secret').where('id', '=', partnerId).executeTakeFirstOrThrow();
  const keep = graceSeconds > 0 && current.webhook_secret !== null;
  await db.kysely
    .updateTable('partners')
    .set({
      webhook_secret: secret,
      previous_webhook_secret: keep ? current.webhook_secret : null,
      previous_webhook_secret_expires_at: keep ? now + graceSeconds * 1000 : null,
      updated_at: now,
    })
    .where('id', '=', partnerId)
    .execute();
  partnersWritten();
  return secret;
}

/** The secrets that sign a delivery made at `now`: the current one, then the previous one while in its grace period. */
export function signingSecrets(p: Pick<Partner, 'webhook_secret' | 'previous_webhook_secret' | 'previous_webhook_secret_expires_at'>, now: number): string[] {
  const secrets = p.webhook_secret ? [p.webhook_secret] : [];
  if (p.previous_webhook_secret && p.previous_webhook_secret_expires_at !== null && now < Number(p.previous_webhook_secret_expires_at)) {
    secrets.push(p.previous_webhook_secret);
  }
  return secrets;
}

/** After an endpoint answered 410 Gone (SPEC §9): no more deliveries until the operator sets a URL again. */
export async function disablePartnerWebhook(db: Write, partnerId: number, now: number): Promise<void> {
  await db.kysely.updateTable('partners').set({ webhook_disabled: 1, updated_at: now }).where('id', '=', partnerId).execute();
  partnersWritten();
}

// Parsed once per row object: the API checks the origin of every browser call, and cached rows
// (services/partner-cache.ts) are the same object from one call to the next.
const parsedOrigins = new WeakMap<Partner, string[]>();

export function allowedOrigins(partner: Partner): string[] {
  let origins = parsedOrigins.get(partner);
  if (!origins) {
    origins = parseOrigins(partner.allowed_origins);
    parsedOrigins.set(partner, origins);
  }
  return origins;
}

function parseOrigins(text: string): string[] {
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((o): o is string => typeof o === 'string') : [];
  } catch {
    return [];
  }
}

/** The console's partner search: by id or api_key exactly, or by a part of the name (any case). */
export async function searchPartners(db: Handle, query: string, limit: number): Promise<Partner[]> {
  const q = query.trim();
  let rows: PartnerRow[];
  if (q === '') rows = await db.kysely.selectFrom('partners').selectAll().orderBy('id', 'desc').limit(limit).execute();
  else {
    const pattern = `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    rows = await db.kysely
      .selectFrom('partners')
      .selectAll()
      .where((eb) =>
        eb.or([
          eb('api_key', '=', q),
          ...(/^[0-9]{1,9}$/.test(q) ? [eb('id', '=', Number(q))] : []),
          eb(sql<string>`lower(name)`, 'like', sql<string>`${pattern} escape '\\'`),
        ]),
      )
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }
  return rows.map(toPartner);
}
