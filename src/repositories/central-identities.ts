// The central repository (SPEC §3): one entry per user and service. Rows leave this module with
// `verified` as a boolean.
import type { Handle, Write } from '../db/handle.js';
import type { ExpressionBuilder } from 'kysely';
import { statement, type Statement } from '../db/prepared.js';
import type { CentralIdentityRow, Database } from '../db/schema.js';
import type { ParsedIdentifier } from '../domain/identifiers.js';
import { allByAccountIdentifier, type ByAccountIdentifier } from './people.js';
import type { VerificationMethod } from '../verification/methods.js';
import { markEvidence, type MarkEvidence } from '../domain/evidence.js';
import { provenAccountSql } from '../domain/visibility.js';

export type CentralIdentity = Omit<CentralIdentityRow, 'verified'> & { verified: boolean };

function toCentralIdentity(row: CentralIdentityRow): CentralIdentity {
  return { ...row, verified: row.verified === 1 };
}

/** What the views show of an entry. */
export interface CentralEntry {
  svc_id: string;
  usr_svc_id: string;
  verified: boolean;
  source_partner_id: number | null;
  updated_at: number;
  verified_by: string | null;
  verified_at: number | null;
  last_checked_at: number | null;
  evidence_url: string | null;
}

/**
 * Whether a view reads the evidence of verified marks: only JSON answers show it. Without it a
 * user's entries (centralEntriesOfUser) select the evidence columns as NULLs, so rows keep one
 * shape; the public view's rows (publicRowsByIdentifier) end before them.
 */
export type Evidence = 'with-evidence' | 'without-evidence';

/** The evidence columns, or NULLs in their place. */
const evidenceColumns = (evidence: Evidence, alias: string) =>
  evidence === 'with-evidence'
    ? `${alias}verified_by, ${alias}verified_at, ${alias}last_checked_at, ${alias}evidence_url`
    : 'NULL AS verified_by, NULL AS verified_at, NULL AS last_checked_at, NULL AS evidence_url';

type CentralEntryRow = Omit<CentralEntry, 'verified'> & { verified: number | boolean };
const entriesOfUserSql = (evidence: Evidence) =>
  `SELECT svc_id, usr_svc_id, verified, source_partner_id, updated_at, ${evidenceColumns(evidence, '')} FROM central_identities WHERE user_ref = ?`;
const entriesOfUser: Record<Evidence, Statement<CentralEntryRow>> = {
  'with-evidence': statement<CentralEntryRow>(entriesOfUserSql('with-evidence')),
  'without-evidence': statement<CentralEntryRow>(entriesOfUserSql('without-evidence')),
};

/** The user's entries, in no particular order. */
export async function centralEntriesOfUser(q: Handle, userRef: number, evidence: Evidence): Promise<CentralEntry[]> {
  const rows = await q.all(entriesOfUser[evidence], userRef);
  // In place: the rows are this call's own, and a copy per row would cost more than the query.
  for (const r of rows) r.verified = r.verified === 1;
  return rows as CentralEntry[];
}

/**
 * The public view's rows (SPEC §3 rule 3): the account's visibility fields beside each of its
 * central entries (NULLs when it has none), as arrays in this column order. The evidence columns
 * are there only when the view reads them: a view without them reads no more than it shows.
 */
export type PublicRow = [
  optedIn: boolean,
  pro: boolean,
  svcId: string | null,
  usrSvcId: string | null,
  verified: boolean,
  sourcePartnerId: number | null,
  updatedAt: number | null,
  userRef: number,
  verifiedBy?: string | null,
  verifiedAt?: number | null,
  lastCheckedAt?: number | null,
  evidenceUrl?: string | null,
];
type PublicRowAsStored = [
  number | boolean,
  number | boolean,
  string | null,
  string | null,
  number | boolean | null,
  number | null,
  number | null,
  number,
  (string | null)?,
  (number | null)?,
  (number | null)?,
  (string | null)?,
];
/** Without evidence, the row simply ends before the evidence columns (no NULLs to read). */
const publicEvidenceColumns: Record<Evidence, string> = {
  'with-evidence': `, ${evidenceColumns('with-evidence', 'ci.')}`,
  'without-evidence': '',
};
const publicSelect = (evidence: Evidence) =>
  `SELECT u.opted_in, u.pro, ci.svc_id, ci.usr_svc_id, ci.verified, ci.source_partner_id, ci.updated_at, u.id${publicEvidenceColumns[evidence]} ` +
  `FROM users u LEFT JOIN central_identities ci ON ci.user_ref = u.id WHERE ${provenAccountSql('u')} AND `;
// One indexed query for the hottest read: the account by its identifier, joined with its entries.
// Rows come as arrays and hold only what the answer uses: building objects and reading unused
// columns would cost about a quarter of the query.
const publicByOf = (evidence: Evidence): ByAccountIdentifier<PublicRowAsStored> => ({
  md5: statement<PublicRowAsStored>(`${publicSelect(evidence)}u.email_md5 = ?`, { rowMode: 'array' }),
  sha256: statement<PublicRowAsStored>(`${publicSelect(evidence)}u.email_sha256 = ?`, { rowMode: 'array' }),
  userId: statement<PublicRowAsStored>(`${publicSelect(evidence)}u.user_id = ?`, { rowMode: 'array' }),
});
const publicBy: Record<Evidence, ByAccountIdentifier<PublicRowAsStored>> = {
  'with-evidence': publicByOf('with-evidence'),
  'without-evidence': publicByOf('without-evidence'),
};

/** The account a partner's identifier names with its entries; no rows when it names nobody (unproven accounts included). */
export async function publicRowsByIdentifier(q: Handle, id: ParsedIdentifier, evidence: Evidence): Promise<PublicRow[]> {
  const rows = await allByAccountIdentifier(q, publicBy[evidence], id);
  for (const r of rows) {
    r[0] = r[0] === 1;
    r[1] = r[1] === 1;
    r[4] = r[4] === 1;
  }
  return rows as PublicRow[];
}

export async function findCentralIdentity(db: Handle, userRef: number, svcId: string): Promise<CentralIdentity | undefined> {
  const row = await db.kysely.selectFrom('central_identities').selectAll().where('user_ref', '=', userRef).where('svc_id', '=', svcId).executeTakeFirst();
  return row && toCentralIdentity(row);
}

export async function insertCentralIdentity(
  w: Write,
  entry: { userRef: number; svcId: string; usrSvcId: string; usrSvcIdNorm: string; sourcePartnerId: number | null },
  now: number,
): Promise<CentralIdentity> {
  const row = await w.kysely
    .insertInto('central_identities')
    .values({
      user_ref: entry.userRef,
      svc_id: entry.svcId,
      usr_svc_id: entry.usrSvcId,
      usr_svc_id_norm: entry.usrSvcIdNorm,
      verified: 0,
      verified_by: null,
      verified_at: null,
      last_checked_at: null,
      source_partner_id: entry.sourcePartnerId,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toCentralIdentity(row);
}

/** A new identifier for an entry: unverified and unchecked again, from its new source, without the old one's proof address. */
export async function replaceCentralIdentity(
  w: Write,
  id: number,
  entry: { usrSvcId: string; usrSvcIdNorm: string; sourcePartnerId: number | null },
  now: number,
): Promise<CentralIdentity> {
  const row = await w.kysely
    .updateTable('central_identities')
    .set({
      usr_svc_id: entry.usrSvcId,
      usr_svc_id_norm: entry.usrSvcIdNorm,
      verified: 0,
      verified_by: null,
      verified_at: null,
      last_checked_at: null,
      evidence_url: null,
      next_check_at: null,
      negative_since: null,
      // A proof address names the account it was given for, not the new one.
      proof_url: null,
      source_partner_id: entry.sourcePartnerId,
      updated_at: now,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toCentralIdentity(row);
}

/** The account behind a verified entry was renamed at its service: the entry follows, keeping its mark. */
export async function renameCentralIdentity(tx: Write, id: number, entry: { usrSvcId: string; usrSvcIdNorm: string }, now: number): Promise<CentralIdentity> {
  const row = await tx.kysely
    .updateTable('central_identities')
    .set({ usr_svc_id: entry.usrSvcId, usr_svc_id_norm: entry.usrSvcIdNorm, updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toCentralIdentity(row);
}

/** Deletes the user's entry for a service; with `onlyUnverifiedFrom`, only if that partner is its source and it is not verified. */
export async function deleteCentralIdentity(w: Write, userRef: number, svcId: string, onlyUnverifiedFrom: number | null): Promise<boolean> {
  let q = w.kysely.deleteFrom('central_identities').where('user_ref', '=', userRef).where('svc_id', '=', svcId);
  if (onlyUnverifiedFrom !== null) q = q.where('source_partner_id', '=', onlyUnverifiedFrom).where('verified', '=', 0);
  const r = await q.executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function deleteCentralIdentitiesOfUser(w: Write, userRef: number): Promise<void> {
  await w.kysely.deleteFrom('central_identities').where('user_ref', '=', userRef).execute();
}

/** The services of the user's entries. */
export async function centralServicesOfUser(db: Handle, userRef: number): Promise<Set<string>> {
  return new Set((await db.kysely.selectFrom('central_identities').select('svc_id').where('user_ref', '=', userRef).execute()).map((r) => r.svc_id));
}

/** The user's entry id for a service, if any. */
export async function centralIdentityIdOf(db: Handle, userRef: number, svcId: string): Promise<number | undefined> {
  return (await db.kysely.selectFrom('central_identities').select('id').where('user_ref', '=', userRef).where('svc_id', '=', svcId).executeTakeFirst())?.id;
}

/** Unverified entries this partner brought into the user's repository (what "also remove" removes). */
export async function unverifiedServicesFrom(db: Handle, userRef: number, partnerId: number): Promise<string[]> {
  const rows = await db.kysely
    .selectFrom('central_identities')
    .select('svc_id')
    .where('user_ref', '=', userRef)
    .where('source_partner_id', '=', partnerId)
    .where('verified', '=', 0)
    .execute();
  return rows.map((r) => r.svc_id);
}

/** How many unverified entries each partner brought into the user's repository. */
export async function countUnverifiedBySource(db: Handle, userRef: number): Promise<Map<number, number>> {
  const rows = await db.kysely
    .selectFrom('central_identities')
    .select(['source_partner_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('user_ref', '=', userRef)
    .where('verified', '=', 0)
    .where('source_partner_id', 'is not', null)
    .groupBy('source_partner_id')
    .execute();
  const out = new Map<number, number>();
  for (const r of rows) if (r.source_partner_id !== null) out.set(r.source_partner_id, Number(r.n));
  return out;
}

export type CentralIdentityWithSource = CentralIdentity & { partner_name: string | null };

/** The user's entries with the name of the partner each came from, by service id (the account page and the export). */
export async function centralIdentitiesWithSource(db: Handle, userRef: number): Promise<CentralIdentityWithSource[]> {
  const rows = await db.kysely
    .selectFrom('central_identities as c')
    .leftJoin('partners as p', 'p.id', 'c.source_partner_id')
    .selectAll('c')
    .select('p.name as partner_name')
    .where('c.user_ref', '=', userRef)
    .orderBy('c.svc_id')
    .execute();
  return rows.map((r) => ({ ...toCentralIdentity(r), partner_name: r.partner_name ?? null }));
}

/** Who claims an identity (reverse_lookup): opted-in, discoverable users, verified claims first, then by userId. */
export async function claimantsOf(db: Handle, svcId: string, usrSvcIdNorm: string, limit: number): Promise<{ user_id: string; verified: boolean }[]> {
  const rows = await db.kysely
    .selectFrom('central_identities as ci')
    .innerJoin('users as u', 'u.id', 'ci.user_ref')
    .where('ci.svc_id', '=', svcId)
    .where('ci.usr_svc_id_norm', '=', usrSvcIdNorm)
    .where('u.opted_in', '=', 1)
    .where('u.discoverable', '=', 1)
    .select(['u.user_id', 'ci.verified'])
    .orderBy('ci.verified', 'desc')
    .orderBy('u.user_id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ user_id: r.user_id, verified: r.verified === 1 }));
}

export interface VerifiedMark {
  verified: boolean;
  verified_by: VerificationMethod | null;
  verified_at: number | null;
  /** What proves the mark; none for an operator's. */
  evidence_url?: string | null;
}

export async function setVerifiedMark(db: Write, id: number, mark: VerifiedMark): Promise<CentralIdentity> {
  const row = await db.kysely
    .updateTable('central_identities')
    .set({ ...mark, evidence_url: mark.evidence_url ?? null, verified: mark.verified ? 1 : 0, negative_since: null })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toCentralIdentity(row);
}

/** The outcome of a check: when it ran, the mark as it now stands, and when the entry is due again. */
export async function recordCheck(
  w: Write,
  id: number,
  mark: VerifiedMark & { negative_since: number | null; next_check_at: number },
  now: number,
): Promise<CentralIdentity> {
  const row = await w.kysely
    .updateTable('central_identities')
    .set({ last_checked_at: now, ...mark, verified: mark.verified ? 1 : 0 })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toCentralIdentity(row);
}

/** The entry if it still has this identifier (a check is about the address it was run on). */
export async function findCentralIdentityAsChecked(w: Write, id: number, usrSvcId: string): Promise<CentralIdentity | undefined> {
  const row = await w.kysely.selectFrom('central_identities').selectAll().where('id', '=', id).where('usr_svc_id', '=', usrSvcId).executeTakeFirst();
  return row && toCentralIdentity(row);
}

/** What a rel="me" check of one entry needs: the identifier and its owner's userId. */
export async function identityToCheck(
  db: Handle,
  id: number,
): Promise<{ id: number; user_ref: number; svc_id: string; usr_svc_id: string; user_id: string } | undefined> {
  return db.kysely
    .selectFrom('central_identities as c')
    .innerJoin('users as u', 'u.id', 'c.user_ref')
    .select(['c.id', 'c.user_ref', 'c.svc_id', 'c.usr_svc_id', 'u.user_id'])
    .where('c.id', '=', id)
    .executeTakeFirst();
}

/**
 * Claims up to `limit` entries that are due: never checked (next_check_at NULL) first, then by how
 * long they have been due. A claim moves next_check_at to `leaseUntil` by a conditional UPDATE from
 * the value that was read, so of several instances exactly one wins each row, and a check that
 * dies with its instance is tried again once the lease ends. Entries an operator verified are left alone.
 */
export async function claimDueIdentities(db: Write, now: number, leaseUntil: number, limit: number): Promise<number[]> {
  const notOperator = (eb: ExpressionBuilder<Database, 'central_identities'>) => eb.or([eb('verified_by', 'is', null), eb('verified_by', '<>', 'operator')]);
  const fresh = await db.kysely
    .selectFrom('central_identities')
    .select(['id', 'next_check_at'])
    .where('next_check_at', 'is', null)
    .where(notOperator)
    .orderBy('id')
    .limit(limit)
    .execute();
  const due =
    fresh.length < limit
      ? await db.kysely
          .selectFrom('central_identities')
          .select(['id', 'next_check_at'])
          .where('next_check_at', '<=', now)
          .where(notOperator)
          .orderBy('next_check_at')
          .orderBy('id')
          .limit(limit - fresh.length)
          .execute()
      : [];
  const claimed: number[] = [];
  for (const c of [...fresh, ...due]) {
    const r = await db.kysely
      .updateTable('central_identities')
      .set({ next_check_at: leaseUntil })
      .where('id', '=', c.id)
      .where('next_check_at', c.next_check_at === null ? 'is' : '=', c.next_check_at)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 1) claimed.push(c.id);
  }
  return claimed;
}

export interface ListedIdentity {
  svcId: string;
  usrSvcId: string;
  verified: boolean;
  evidence: MarkEvidence | null;
}

/** A user's whole central repository, disabled services included (the caller's catalogue drops those). */
export async function listCentralIdentities(db: Handle, userRef: number): Promise<ListedIdentity[]> {
  const rows = await db.kysely
    .selectFrom('central_identities')
    .select(['svc_id', 'usr_svc_id', 'verified', 'verified_by', 'verified_at', 'last_checked_at', 'evidence_url'])
    .where('user_ref', '=', userRef)
    .execute();
  return rows.map((r) => ({
    svcId: r.svc_id,
    usrSvcId: r.usr_svc_id,
    verified: r.verified === 1,
    evidence: markEvidence({ ...r, verified: r.verified === 1 }),
  }));
}
