// The data export (SPEC §12): everything held about one user, as one JSON document. Never the
// password hash or session secrets.
import { buildProfileUrl } from '../catalogue/profile-url.js';
import type { AppContext } from '../context.js';
import type { UserRow } from '../db/schema.js';
import { parsePublicFields, PROFILE_FIELDS } from '../domain/profile.js';
import { profilePageUrl } from '../verification/verify.js';
import { runsWithPagesOf, verifiedPagesOf } from '../repositories/discovery.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function buildExport(ctx: AppContext, user: UserRow) {
  const db = ctx.db.kysely;
  const snap = await ctx.catalogue.get();
  const identities = await db
    .selectFrom('central_identities as c')
    .leftJoin('partners as p', 'p.id', 'c.source_partner_id')
    .select(['c.id', 'c.svc_id', 'c.usr_svc_id', 'c.verified', 'c.verified_by', 'c.verified_at', 'c.last_checked_at', 'c.created_at', 'c.updated_at', 'p.name as partner_name'])
    .where('c.user_ref', '=', user.id)
    .orderBy('c.svc_id')
    .execute();
  const links = await db
    .selectFrom('links as l')
    .innerJoin('partners as p', 'p.id', 'l.partner_id')
    .select(['p.name', 'l.user_identifier', 'l.created_at'])
    .where('l.user_ref', '=', user.id)
    .orderBy('l.id')
    .execute();
  const attempts = await db.selectFrom('verification_attempts').selectAll().where('user_ref', '=', user.id).orderBy('attempted_at').orderBy('id').execute();
  // What partners stored themselves about this person is theirs, but it is about the user too.
  const partnerEntries = await db
    .selectFrom('partner_identities as pi')
    .innerJoin('subjects as s', 's.id', 'pi.subject_id')
    .innerJoin('partners as p', 'p.id', 'pi.partner_id')
    .select(['p.name', 'pi.svc_id', 'pi.usr_svc_id', 'pi.updated_at'])
    .where('s.user_ref', '=', user.id)
    .orderBy('p.name')
    .orderBy('pi.svc_id')
    .execute();
  const sessions = await db.selectFrom('sessions').select(['created_at', 'expires_at']).where('user_ref', '=', user.id).orderBy('created_at').execute();
  const publicFields = parsePublicFields(user.public_fields);
  const urlOf = (svcId: string, usrSvcId: string) => {
    const svc = snap.byId.get(svcId);
    return svc ? buildProfileUrl(svc, usrSvcId) : null;
  };

  return {
    format: 'idsvc-export/1',
    exportedAt: iso(ctx.clock.now()),
    account: {
      userId: user.user_id,
      email: user.email,
      profileUrl: profilePageUrl(ctx, user.user_id),
      // The user's consent; they are visible only once their address is confirmed too.
      optedIn: user.consented === 1,
      emailConfirmedAt: iso(user.email_proven_at),
      visibleToPartners: user.opted_in === 1,
      discoverable: user.discoverable === 1,
      pro: user.pro === 1,
      createdAt: iso(user.created_at),
      updatedAt: iso(user.updated_at),
    },
    profile: Object.fromEntries(PROFILE_FIELDS.map(([field, column]) => [field, { value: user[column], public: publicFields.includes(field) }])),
    identities: identities.map((i) => ({
      svcId: i.svc_id,
      svcName: snap.byId.get(i.svc_id)?.svcName ?? null,
      usrSvcId: i.usr_svc_id,
      url: urlOf(i.svc_id, i.usr_svc_id),
      verified: i.verified === 1,
      verifiedBy: i.verified_by,
      verifiedAt: iso(i.verified_at),
      lastCheckedAt: iso(i.last_checked_at),
      addedBy: i.partner_name ?? null,
      createdAt: iso(i.created_at),
      updatedAt: iso(i.updated_at),
    })),
    links: links.map((l) => ({ partner: l.name, userIdentifier: l.user_identifier, linkedAt: iso(l.created_at) })),
    verificationAttempts: attempts.map((a) => ({ svcId: a.svc_id, url: a.url, outcome: a.outcome, detail: a.detail, attemptedAt: iso(a.attempted_at) })),
    partnerEntries: partnerEntries.map((e) => ({ partner: e.name, svcId: e.svc_id, usrSvcId: e.usr_svc_id, updatedAt: iso(e.updated_at) })),
    sessions: sessions.map((s) => ({ startedAt: iso(s.created_at), expiresAt: iso(s.expires_at) })),
    provenPages: await verifiedPagesOf(db, user.id),
    discoveryRuns: (await runsWithPagesOf(db, user.id)).map((r) => ({
      startUrl: r.startUrl,
      status: r.status,
      pagesFetched: r.pagesFetched,
      startedAt: iso(r.createdAt),
      finishedAt: iso(r.finishedAt),
      pages: r.pages.map((p) => ({ url: p.url, finalUrl: p.finalUrl, depth: p.depth, outcome: p.outcome, detail: p.detail, kind: p.kind, svcId: p.svcId, usrSvcId: p.usrSvcId, linksBack: p.linksBack, at: iso(p.fetchedAt) })),
    })),
  };
}
