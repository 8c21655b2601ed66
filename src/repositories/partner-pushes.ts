// PostgreSQL: update_service for a person the partner has not linked, in one statement and one
// round trip instead of five or six (BEGIN, the person, maybe a new subject, the push, the link,
// COMMIT), each of which waits for the server. A single statement is a transaction of its own.
//
// It does what services/partner-data.ts pushIdentity does in its transaction, in the same order:
// the account the identifier names (a proven address only) and its subject, else the orphan subject
// under that name; a new subject when there is none; then, unless the partner is linked to that
// subject or to the account (as findLink matches), the upsert. When linked it changes nothing and says so: the push must also flow to the
// central repository with its events (SPEC §9), and that takes the transactional path.
import type { Db } from '../db/database.js';
import type { ParsedIdentifier } from '../domain/identifiers.js';

/** Identifier kinds this statement handles; an e-mail address (two digests to record) takes the transactional path. */
type Kind = 'md5' | 'sha256' | 'userId';
const USER_COLUMN: Record<Kind, string> = { md5: 'email_md5', sha256: 'email_sha256', userId: 'user_id' };
const SUBJECT_COLUMN: Record<Kind, string> = { md5: 'email_md5', sha256: 'email_sha256', userId: 'handle' };

// $1 identifier, $2 partner id, $3 svcId, $4 usrSvcId, $5 now.
function pushText(kind: Kind): string {
  const subjectColumn = SUBJECT_COLUMN[kind];
  return `WITH acct AS (
      SELECT id FROM users WHERE email_proven_at IS NOT NULL AND ${USER_COLUMN[kind]} = $1
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
    ), linked AS (
      -- Two probes by one value each (subject holds one row at most): an OR over a subquery can
      -- use neither index and reads every link.
      SELECT 1 FROM links l WHERE l.partner_id = $2 AND l.subject_id = (SELECT id FROM subject)
      UNION ALL
      SELECT 1 FROM links l WHERE l.partner_id = $2 AND l.user_ref = (SELECT id FROM acct)
    ), pushed AS (
      INSERT INTO partner_identities (partner_id, subject_id, svc_id, usr_svc_id, created_at, updated_at)
      SELECT $2, s.id, $3, $4, $5, $5 FROM subject s WHERE NOT EXISTS (SELECT 1 FROM linked)
      ON CONFLICT (partner_id, subject_id, svc_id) DO UPDATE SET usr_svc_id = excluded.usr_svc_id, updated_at = excluded.updated_at
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM pushed)::int AS pushed`;
}

/** The statements by identifier kind (exported for the test that checks their plans). */
export const PUSH_STATEMENTS: Record<Kind, { name: string; text: string }> = {
  md5: { name: 'idsvc_push_unlinked_md5', text: pushText('md5') },
  sha256: { name: 'idsvc_push_unlinked_sha256', text: pushText('sha256') },
  userId: { name: 'idsvc_push_unlinked_userid', text: pushText('userId') },
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

/**
 * Sets the partner's entry in one round trip when the person is not linked to the partner. False
 * when it wrote nothing and the transactional path must run: linked, an e-mail address, SQLite,
 * or a subject created by a concurrent request at the same moment.
 */
export async function pushUnlinkedInOneStatement(db: Db, partnerId: number, id: ParsedIdentifier, svcId: string, usrSvcId: string, now: number): Promise<boolean> {
  const kv = identifierValue(id);
  if (!db.pgPool || !kv) return false;
  const statement = PUSH_STATEMENTS[kv[0]];
  const result = await db.pgPool.query<{ pushed: number }>({ ...statement, values: [kv[1], partnerId, svcId, usrSvcId, now] });
  return (result.rows[0]?.pushed ?? 0) > 0;
}
