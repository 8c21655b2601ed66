// Single rows of the central repository, for commands that change one entry's verified mark.
import type { Kysely, Transaction } from 'kysely';
import type { CentralIdentityRow, Database } from '../db/schema.js';

type Q = Kysely<Database> | Transaction<Database>;

export async function findCentralIdentity(db: Q, userRef: number, svcId: string): Promise<CentralIdentityRow | undefined> {
  return db.selectFrom('central_identities').selectAll().where('user_ref', '=', userRef).where('svc_id', '=', svcId).executeTakeFirst();
}

export interface VerifiedMark {
  verified: 0 | 1;
  verified_by: 'relme' | 'operator' | null;
  verified_at: number | null;
}

export async function setVerifiedMark(db: Q, id: number, mark: VerifiedMark): Promise<CentralIdentityRow> {
  return db.updateTable('central_identities').set(mark).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export interface CentralIdentity {
  svcId: string;
  usrSvcId: string;
  verified: boolean;
}

/** A user's whole central repository, disabled services included (the caller's catalogue drops those). */
export async function listCentralIdentities(db: Q, userRef: number): Promise<CentralIdentity[]> {
  const rows = await db.selectFrom('central_identities').select(['svc_id', 'usr_svc_id', 'verified']).where('user_ref', '=', userRef).execute();
  return rows.map((r) => ({ svcId: r.svc_id, usrSvcId: r.usr_svc_id, verified: r.verified === 1 }));
}
