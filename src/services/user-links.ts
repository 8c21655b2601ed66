// A user ending a partner's link from the site (SPEC §9): the partner is told `link.removed` (it is
// no longer linked, so it is written to it explicitly), the user's other linked partners hear it
// too, and — when the user asks — the unverified entries that partner brought in are removed.
import { recordLinkEvents } from '../repositories/partner-link-events.js';
import type { AppContext } from '../context.js';
import { errors } from '../domain/errors.js';
import { countUnverifiedBySource, unverifiedServicesFrom } from '../repositories/central-identities.js';
import { deleteLinksOfUser, linksOfUserToPartner, listLinksOfUser } from '../repositories/links.js';
import { announce, removeCentralIdentity } from './central.js';
import type { User } from '../repositories/users.js';

export interface LinkSummary {
  partnerId: number;
  partnerName: string;
  /** When the first of this partner's links to the user was made. */
  linkedAt: number;
  /** Central entries this partner is the source of (the ones "also remove" would remove). */
  addedCount: number;
}

/** The user's links, one line per partner (a partner may have linked the user under two identifiers). */
export async function listUserLinks(ctx: AppContext, user: User): Promise<LinkSummary[]> {
  const rows = await listLinksOfUser(ctx.db, user.id, 'made');
  const addedBy = await countUnverifiedBySource(ctx.db, user.id);
  const out = new Map<number, LinkSummary>();
  for (const r of rows) {
    if (!out.has(r.partner_id))
      out.set(r.partner_id, { partnerId: r.partner_id, partnerName: r.partner_name, linkedAt: r.created_at, addedCount: addedBy.get(r.partner_id) ?? 0 });
  }
  return [...out.values()];
}

export async function endLinkByUser(ctx: AppContext, user: User, partnerId: number, options: { removeAdded: boolean }): Promise<{ removed: string[] }> {
  const now = ctx.clock.now();
  return ctx.db.write(async (w) => {
    const links = await linksOfUserToPartner(w, user.id, partnerId);
    const first = links[0];
    if (!first) throw errors.linkNotFound();
    const data = () => ({ partner: first.partner_name, endedBy: 'user' });
    // The partner itself, once for each identifier it linked the user under.
    await announce(w, user, 'link.removed', data, now, { only: links });
    await deleteLinksOfUser(w, user.id, partnerId);
    await recordLinkEvents(w, [partnerId], 'unlinked', 'user', now);
    // Everyone still linked.
    await announce(w, user, 'link.removed', data, now);
    const removed: string[] = [];
    if (options.removeAdded) {
      const added = await unverifiedServicesFrom(w, user.id, partnerId);
      for (const svcId of added) {
        if (await removeCentralIdentity(w, user, svcId, { partnerId }, now)) removed.push(svcId);
      }
    }
    return { removed };
  });
}
