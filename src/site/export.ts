// The data export (SPEC §12): everything held about one user, as one JSON document. Never the
// password hash or session secrets.
import { buildProfileUrl } from '../catalogue/profile-url.js';
import type { AppContext } from '../context.js';
import { parsePublicFields, PROFILE_FIELDS } from '../domain/profile.js';
import { centralIdentitiesWithSource } from '../repositories/central-identities.js';
import { listLinksOfUser } from '../repositories/links.js';
import { listApplicationsOfUser } from '../repositories/partner-applications.js';
import { membershipsOf } from '../repositories/partner-members.js';
import { pushedEntriesAboutUser } from '../repositories/partner-identities.js';
import { sessionTimesOfUser } from '../repositories/sessions.js';
import { attemptsOfUser } from '../repositories/verification-attempts.js';
import { profilePageUrl } from '../verification/verify.js';
import type { User } from '../repositories/users.js';
import { runsWithPagesOf, verifiedPagesOf } from '../repositories/discovery.js';
import { photoOfUser } from '../repositories/avatar-photos.js';
import { passkeysOfUser } from '../repositories/passkeys.js';
import { connectionsOfUser } from '../repositories/provider-connections.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function buildExport(ctx: AppContext, user: User) {
  const db = ctx.db;
  const snap = await ctx.catalogue.get();
  const identities = await centralIdentitiesWithSource(db, user.id);
  const links = await listLinksOfUser(db, user.id, 'written');
  const attempts = await attemptsOfUser(db, user.id);
  // What partners stored themselves about this person is theirs, but it is about the user too.
  const partnerEntries = await pushedEntriesAboutUser(db, user.id);
  const sessions = await sessionTimesOfUser(db, user.id);
  const publicFields = parsePublicFields(user.public_fields);
  const photo = await photoOfUser(db, user.id);
  const connections = await connectionsOfUser(db, user.id);
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
      optedIn: user.consented,
      emailConfirmedAt: iso(user.email_proven_at),
      visibleToPartners: user.opted_in,
      discoverable: user.discoverable,
      pro: user.pro,
      role: user.role,
      createdAt: iso(user.created_at),
      updatedAt: iso(user.updated_at),
    },
    profile: Object.fromEntries(PROFILE_FIELDS.map(([field, column]) => [field, { value: user[column], public: publicFields.includes(field) }])),
    identities: identities.map((i) => ({
      svcId: i.svc_id,
      svcName: snap.byId.get(i.svc_id)?.svcName ?? null,
      usrSvcId: i.usr_svc_id,
      url: urlOf(i.svc_id, i.usr_svc_id),
      verified: i.verified,
      verifiedBy: i.verified_by,
      verifiedAt: iso(i.verified_at),
      lastCheckedAt: iso(i.last_checked_at),
      evidenceUrl: i.evidence_url,
      addedBy: i.partner_name ?? null,
      createdAt: iso(i.created_at),
      updatedAt: iso(i.updated_at),
    })),
    links: links.map((l) => ({ partner: l.partner_name, userIdentifier: l.user_identifier, linkedAt: iso(l.created_at) })),
    verificationAttempts: attempts.map((a) => ({
      svcId: a.svc_id,
      method: a.method,
      url: a.url,
      outcome: a.outcome,
      status: a.status,
      detail: a.detail,
      attemptedAt: iso(a.attempted_at),
    })),
    partnerEntries: partnerEntries.map((e) => ({ partner: e.partner_name, svcId: e.svc_id, usrSvcId: e.usr_svc_id, updatedAt: iso(e.updated_at) })),
    sessions: sessions.map((s) => ({ startedAt: iso(s.created_at), expiresAt: iso(s.expires_at) })),
    // What the person named them and when; the public keys are no use to anyone outside this site.
    passkeys: (await passkeysOfUser(db, user.id)).map((k) => ({ name: k.name, addedAt: iso(k.createdAt), lastUsedAt: iso(k.lastUsedAt) })),
    provenPages: await verifiedPagesOf(db, user.id),
    discoveryRuns: (await runsWithPagesOf(db, user.id)).map((r) => ({
      startUrl: r.startUrl,
      status: r.status,
      pagesFetched: r.pagesFetched,
      startedAt: iso(r.createdAt),
      finishedAt: iso(r.finishedAt),
      pages: r.pages.map((p) => ({
        url: p.url,
        finalUrl: p.finalUrl,
        depth: p.depth,
        outcome: p.outcome,
        detail: p.detail,
        kind: p.kind,
        svcId: p.svcId,
        usrSvcId: p.usrSvcId,
        linksBack: p.linksBack,
        at: iso(p.fetchedAt),
      })),
    })),
    partnerApplications: (await listApplicationsOfUser(db, user.id)).map((a) => ({
      name: a.name,
      siteUrl: a.siteUrl,
      purpose: a.purpose,
      origins: a.origins,
      contact: a.contact,
      status: a.status,
      declineReason: a.declineReason,
      sentAt: iso(a.createdAt),
      decidedAt: iso(a.decidedAt),
    })),
    partnerMemberships: (await membershipsOf(db, user.id)).map((m) => ({ partner: m.name, apiKey: m.apiKey })),
    // The photo as stored (re-encoded, without the uploaded file's metadata), as a data: URL.
    photo: photo ? { updatedAt: iso(photo.updatedAt), dataUrl: `data:${photo.mediaType};base64,${photo.image.toString('base64')}` } : null,
    // What is kept of each sign-in provider connection: no token is kept, so none is listed.
    providerConnections: connections.map((c) => ({
      provider: c.provider,
      accountId: c.subject,
      username: c.username,
      connectedAt: iso(c.createdAt),
      lastLogInAt: c.lastLoginAt === null ? null : iso(c.lastLoginAt),
    })),
  };
}
