// The proof addresses people give for their identities (migration 015): a column of
// central_identities, read and written only here.
import type { Handle, Write } from '../db/handle.js';

export interface IdentityWithProofUrl {
  id: number;
  svcId: string;
  usrSvcId: string;
  proofUrl: string | null;
}

/** The user's entries with the proof address each has, if any. */
export async function identitiesWithProofUrls(db: Handle, userRef: number): Promise<IdentityWithProofUrl[]> {
  const rows = await db.kysely
    .selectFrom('central_identities')
    .select(['id', 'svc_id', 'usr_svc_id', 'proof_url'])
    .where('user_ref', '=', userRef)
    .orderBy('svc_id')
    .execute();
  return rows.map((r) => ({ id: r.id, svcId: r.svc_id, usrSvcId: r.usr_svc_id, proofUrl: r.proof_url }));
}

/** The proof address of one entry, for the check that reads it. */
export async function proofUrlOf(db: Handle, identityId: number): Promise<string | null> {
  const row = await db.kysely.selectFrom('central_identities').select('proof_url').where('id', '=', identityId).executeTakeFirst();
  return row?.proof_url ?? null;
}

/**
 * Sets or clears the proof address of the user's entry for a service; false when there is none.
 * The entry becomes due for a check at once (never checked comes first), since what proves it
 * has just changed.
 */
export async function setProofUrl(db: Write, userRef: number, svcId: string, proofUrl: string | null): Promise<boolean> {
  const r = await db.kysely
    .updateTable('central_identities')
    .set({ proof_url: proofUrl, last_checked_at: null })
    .where('user_ref', '=', userRef)
    .where('svc_id', '=', svcId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
