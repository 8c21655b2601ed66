// PostgreSQL: update_service in one statement and one round trip instead of five to twelve (BEGIN,
// the person, maybe a new subject, the push, the link, and for a linked person the account, its
// central entry, the partners to tell, COMMIT), each of which waits for the server. A single
// statement is a transaction of its own.
//
// It does what services/partner-data.ts pushIdentity does in its transaction, in the same order:
// the account the identifier names (a proven address only) and its subject, else the orphan subject
// under that name; a new subject when there is none; the upsert into the partner's repository; and
// when the partner linked this subject to an account, the flow into the central repository (SPEC §9,
// services/central.ts setCentralIdentity): a new or changed entry unless the account proved the one
// it has (verified), and then an `identity.updated` event for every other partner linked to that
// account, while the account is visible. The events' payloads are the bytes writeEvents would write
// (JSON.stringify's form; to_json escapes strings as it does).
import type { Db, Handle } from '../db/handle.js';
import type { ParsedIdentifier } from '../domain/identifiers.js';
import { provenAccountSql } from '../domain/visibility.js';

/** Identifier kinds this statement handles; an e-mail address (two digests to record) takes the transactional path. */
type Kind = 'md5' | 'sha256' | 'userId';
const USER_COLUMN: Record<Kind, string> = { md5: 'email_md5', sha256: 'email_sha256', userId: 'user_id' };
const SUBJECT_COLUMN: Record<Kind, string> = { md5: 'email_md5', sha256: 'email_sha256', userId: 'handle' };

/** A JSON string (or null) for a text expression, as JSON.stringify writes it. */
const json = (expr: string) => `coalesce(to_json(${expr})::text, 'null')`;

// $1 identifier, $2 partner id, $3 svcId, $4 usrSvcId, $5 now, $6 usrSvcId normalised, $7 the
// profile URL, $8 now as an ISO 8601 timestamp (the events' `timestamp`).
function pushText(kind: Kind): string {
  const subjectColumn = SUBJECT_COLUMN[kind];
  const payload = `'{"type":"identity.updated","timestamp":' || ${json('$8::text')} || ',"data":{"user_identifier":' || ${json('lp.user_identifier')}
      || ',"userId":' || ${json('o.user_id')} || ',"svcId":' || ${json('$3::text')}
      || CASE WHEN lp.trusted = 1 OR o.pro = 1 THEN ',"usrSvcId":' || ${json('$4::text')} ELSE '' END
      || ',"url":' || ${json('$7::text')} || ',"verified":false}}'`;
  return `WITH acct AS (
      SELECT id FROM users WHERE ${provenAccountSql()} AND ${USER_COLUMN[kind]} = $1
    ), found AS (
      SELECT s.id FROM subjects s JOIN acct a ON s.user_ref = a.id
      UNION ALL
      SELECT s.id FROM subjects s WHERE NOT EXISTS (SELECT 1 FROM acct) AND s.${subjectColumn} = $1
      LIMIT 1
    ), created AS (
      INSERT INTO subjects (user_ref, ${subjectColumn}, created_at)
      SELECT a.id, CASE WHEN a.id IS NULL THEN $1 END, $5 FROM (SELECT (SELECT id FROM acct) AS id) a
      WHERE NOT EXISTS (SELECT 1 FROM found)
      ON CONFLICT DO NOTHING RETURNING id
    ), subject AS (
      SELECT id FROM found UNION ALL SELECT id FROM created
    ), pushed AS (
      INSERT INTO partner_identities (partner_id, subject_id, svc_id, usr_svc_id, created_at, updated_at)
      SELECT $2, s.id, $3, $4, $5, $5 FROM subject s
      ON CONFLICT (partner_id, subject_id, svc_id) DO UPDATE SET usr_svc_id = excluded.usr_svc_id, updated_at = excluded.updated_at
      RETURNING subject_id
    ), owner AS (
      -- The account this partner linked through this subject (links_partner_subject: one at most).
      SELECT u.id, u.user_id, u.pro, u.opted_in FROM links l JOIN users u ON u.id = l.user_ref
      WHERE l.partner_id = $2 AND l.subject_id = (SELECT subject_id FROM pushed)
    ), central AS (
      INSERT INTO central_identities (user_ref, svc_id, usr_svc_id, usr_svc_id_norm, verified, verified_by, verified_at, last_checked_at, source_partner_id, created_at, updated_at)
      SELECT o.id, $3, $4, $6, 0, NULL, NULL, NULL, $2, $5, $5 FROM owner o
      ON CONFLICT (user_ref, svc_id) DO UPDATE SET usr_svc_id = excluded.usr_svc_id, usr_svc_id_norm = excluded.usr_svc_id_norm,
        verified = 0, verified_by = NULL, verified_at = NULL, last_checked_at = NULL, evidence_url = NULL, next_check_at = NULL, negative_since = NULL, proof_url = NULL, source_partner_id = excluded.source_partner_id, updated_at = excluded.updated_at
      -- Unchanged, or proven by the account itself: a partner's push leaves it as it is, and tells nobody.
      WHERE central_identities.verified = 0 AND central_identities.usr_svc_id <> excluded.usr_svc_id
      RETURNING 1
    ), announced AS (
      -- Run though nothing reads it: PostgreSQL carries out every data-modifying CTE.
      INSERT INTO outbox (event_id, partner_id, user_ref, event_type, payload, status, attempts, next_attempt_at, locked_until, last_error, delivered_at, created_at)
      SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), lp.partner_id, o.id, 'identity.updated', ${payload}, 'pending', 0, $5, NULL, NULL, NULL, $5
      FROM owner o CROSS JOIN LATERAL (
        -- Each linked partner once, as linkedPartners lists them (its first link).
        SELECT DISTINCT ON (l.partner_id) l.id, l.partner_id, l.user_identifier, p.trusted
        FROM links l JOIN partners p ON p.id = l.partner_id WHERE l.user_ref = o.id ORDER BY l.partner_id, l.id
      ) lp
      WHERE o.opted_in = 1 AND lp.partner_id <> $2 AND EXISTS (SELECT 1 FROM central)
      ORDER BY lp.id
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM pushed)::int AS pushed`;
}

/** The statements by identifier kind (exported for the test that checks their plans). */
export const PUSH_STATEMENTS: Record<Kind, { name: string; text: string }> = {
  md5: { name: 'idsvc_push_md5', text: pushText('md5') },
  sha256: { name: 'idsvc_push_sha256', text: pushText('sha256') },
  userId: { name: 'idsvc_push_userid', text: pushText('userId') },
};

function identifierValue(id: ParsedIdentifier): [Kind, string] | null {
  switch (id.kind) {
    case 'md5':
      return ['md5', id.md5];
    case 'sha256':
      return ['sha256', id.sha256];
    case 'userId':
      return ['userId', id.userId];
    case 'email':
      return null;
  }
}

export interface PushInOneStatement {
  svcId: string;
  usrSvcId: string;
  /** normaliseUsrSvcId(usrSvcId), for the central entry. */
  usrSvcIdNorm: string;
  /** The profile URL, for the events. */
  url: string;
  now: number;
}

/** Whether this database pushes in one statement (PostgreSQL); SQLite takes the transaction, in a group commit. */
export function pushesInOneStatement(db: Handle): boolean {
  return db.dialect === 'postgres';
}

/**
 * Sets the partner's entry (and flows it when linked) in one round trip. False when it wrote
 * nothing and the transactional path must run: an e-mail address, SQLite, or a subject created by
 * a concurrent request at the same moment.
 */
export async function pushInOneStatement(db: Db, partnerId: number, id: ParsedIdentifier, push: PushInOneStatement): Promise<boolean> {
  const kv = identifierValue(id);
  if (!db.writeAlone || !kv) return false;
  const values = [kv[1], partnerId, push.svcId, push.usrSvcId, push.now, push.usrSvcIdNorm, push.url, new Date(push.now).toISOString()];
  const rows = await db.writeAlone<{ pushed: number }>(PUSH_STATEMENTS[kv[0]], values);
  return (rows[0]?.pushed ?? 0) > 0;
}
