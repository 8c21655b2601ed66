// A user ending a partner's link from the site (SPEC §9): the partner is told `link.removed` (it is
// no longer linked, so it is written to it explicitly), the user's other linked partners hear it
// too, and — when the user asks — the unverified entries that partner brought in are removed.
import type { AppContext } from '../context.js';
import type { UserRow } from '../db/schema.js';
import { errors } from '../domain/errors.js';
import { announce, removeCentralIdentity } from './central.js';

export interface LinkSummary {
  partnerId: number;
  partnerName: string;
  /** When the first of this partner's links to the user was made. */
  linkedAt: number;
  /** Central entries this partner is the source of (the ones "also remove" would remove). */
  addedCount: number;
}

/** The user's links, one line per partner (a partner may have linked the user under two identifiers). */
export async function listUserLinks(ctx: AppContext, user: UserRow): Promise<LinkSummary[]> {
  const db = ctx.db.kysely;
  const rows = await db
    .selectFrom('links as l')
    .innerJoin('partners as p', 'p.id', 'l.partner_id')
    .where('l.user_ref', '=', user.id)
    .select(['l.partner_id', 'p.name', 'l.created_at'])
    .orderBy('l.created_at')
    .orderBy('l.id')
    .execute();
  const added = await db
    .selectFrom('central_identities')
    .select(['source_partner_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('user_ref', '=', user.id)
    .where('verified', '=', 0)
    .where('source_partner_id', 'is not', null)
    .groupBy('source_partner_id')
    .execute();
  const addedBy = new Map(added.map((a) => [a.source_partner_id, Number(a.n)]));
  const out = new Map<number, LinkSummary>();
  for (const r of rows) {
    if (!out.has(r.partner_id)) out.set(r.partner_id, { partnerId: r.partner_id, partnerName: r.name, linkedAt: r.created_at, addedCount: addedBy.get(r.partner_id) ?? 0 });
  }
  return [...out.values()];
}

export async function endLinkByUser(ctx: AppContext, user: UserRow, partnerId: number, options: { removeAdded: boolean }): Promise<{ removed: string[] }> {
  const now = ctx.clock.now();
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const links = await tx
      .selectFrom('links as l')
      .innerJoin('partners as p', 'p.id', 'l.partner_id')
      .where('l.user_ref', '=', user.id)
      .where('l.partner_id', '=', partnerId)
      .select(['l.id', 'l.partner_id', 'l.user_identifier', 'p.trusted', 'p.name'])
      .orderBy('l.id')
      .execute();
    const first = links[0];
    if (!first) throw errors.linkNotFound();
    const data = () => ({ partner: first.name, endedBy: 'user' });
    // The partner itself, once for each identifier it linked the user under.
    await announce(tx, user, 'link.removed', data, now, { only: links.map((l) => ({ partner_id: l.partner_id, user_identifier: l.user_identifier, trusted: l.trusted })) });
    await tx.deleteFrom('links').where('user_ref', '=', user.id).where('partner_id', '=', partnerId).execute();
    // Everyone still linked.
    await announce(tx, user, 'link.removed', data, now);
    const removed: string[] = [];
    if (options.removeAdded) {
      const added = await tx
        .selectFrom('central_identities')
        .select('svc_id')
        .where('user_ref', '=', user.id)
        .where('source_partner_id', '=', partnerId)
        .where('verified', '=', 0)
        .execute();
      for (const { svc_id } of added) {
        if (await removeCentralIdentity(tx, user, svc_id, { partnerId }, now)) removed.push(svc_id);
      }
    }
    return { removed };
  });
}
