// The operator's verified mark (SPEC §3 rule 6, docs/site.md): an operator vouches for a central
// entry that a rel="me" check cannot prove. Like every change to the central repository, a flip of
// `verified` is announced to the user's linked partners (identity.updated) in the same transaction.
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import type { AppContext } from '../context.js';
import { findCentralIdentity, setVerifiedMark, type CentralIdentity } from '../repositories/central-identities.js';
import { announce, identityData, verificationData } from './central.js';
import type { User } from '../repositories/users.js';

/** What the command did: `set`/`cleared` changed the entry; `unchanged` found it as asked. */
export type MarkOutcome = 'set' | 'cleared' | 'unchanged';

export class NoCentralEntryError extends Error {
  constructor(userId: string, svcId: string) {
    super(`${userId} has no ${svcId} entry in the central repository`);
  }
}

/** Clearing applies to an operator's mark only; a rel="me" proof stands while its backlink does. */
export class ProvenByRelMeError extends Error {
  constructor(userId: string, svcId: string) {
    super(
      `${userId}'s ${svcId} entry is verified by its rel="me" link, not by an operator; it stays verified while that link exists (the daily check clears it when the link goes)`,
    );
  }
}

export async function setOperatorMark(
  ctx: AppContext,
  user: User,
  svc: CatalogueEntry,
  on: boolean,
): Promise<{ outcome: MarkOutcome; entry: CentralIdentity }> {
  const now = ctx.clock.now();
  return ctx.db.write(async (w) => {
    const current = await findCentralIdentity(w, user.id, svc.svcId);
    if (!current) throw new NoCentralEntryError(user.user_id, svc.svcId);
    const operatorMarked = current.verified && current.verified_by === 'operator';
    if (on ? operatorMarked : !current.verified) return { outcome: 'unchanged', entry: current };
    if (!on && !operatorMarked) throw new ProvenByRelMeError(user.user_id, svc.svcId);
    // Setting over a rel="me" proof keeps it verified but makes the mark the operator's, so a later
    // failed check does not clear it; `verified` does not flip then, so partners hear nothing new.
    const entry = await setVerifiedMark(
      w,
      current.id,
      on
        ? { verified: true, verified_by: 'operator', verified_at: current.verified ? current.verified_at : now }
        : { verified: false, verified_by: null, verified_at: null },
    );
    if (entry.verified !== current.verified) {
      await announce(w, user, 'identity.updated', identityData(user, svc, entry), now);
      const reason = { method: 'operator' as const, evidenceUrl: null, detail: 'an operator removed the mark' };
      await announce(w, user, on ? 'identity.verified' : 'identity.unverified', verificationData(user, svc, entry, on ? null : reason), now);
    }
    return { outcome: on ? 'set' : 'cleared', entry };
  });
}
