// rel="me" as a verification method: the identity's profile page (built from the catalogue's URL
// pattern, as every rel="me" check has been) links back to the account's profile page, or to a
// page already proven the person's. It applies wherever the service gives the identifier a page,
// and is dependable where the service is known to render rel="me" links (rel-me-services.ts).
import type { AppContext } from '../context.js';
import { buildProfileUrl } from '../catalogue/profile-url.js';
import { identitiesOfUser, verifiedPagesOf } from '../repositories/discovery.js';
import type { CheckOutcome, VerificationChecker } from './methods.js';
import { checkRelMe, normaliseProfileUrl } from './relme.js';
import { REL_ME_SERVICES } from './rel-me-services.js';
import { testOriginOf } from './polite-fetch.js';
import { safeFetch } from './safe-fetch.js';

/**
 * Normalised URLs already proven to be the user's besides the profile page: their verified
 * identities (but `exceptIdentityId`, the one being checked) and the pages "Find my identities"
 * proved. A rel="me" link to any of them proves a page too (transitive rel="me").
 */
export async function userProvenUrls(ctx: AppContext, userRef: number, exceptIdentityId?: number): Promise<string[]> {
  const snap = await ctx.catalogue.get();
  const urls: string[] = [];
  for (const r of await identitiesOfUser(ctx.db, userRef)) {
    const svc = snap.byId.get(r.svcId);
    const url = svc && r.verified && r.id !== exceptIdentityId ? buildProfileUrl(svc, r.usrSvcId) : '';
    if (url) urls.push(normaliseProfileUrl(url));
  }
  return [...urls, ...(await verifiedPagesOf(ctx.db, userRef))];
}

// A page that is gone says the identity is not there; anything else that is not a 2xx says only
// that we could not read it (a login wall, a block of our user agent, an outage).
const GONE = new Set([404, 410]);

export const relMeChecker: VerificationChecker = {
  method: 'rel-me',
  appliesTo: (svc, usrSvcId) => buildProfileUrl(svc, usrSvcId) !== '',
  dependable: (svc) => REL_ME_SERVICES.has(svc.svcId),
  async check(ctx, subject): Promise<CheckOutcome> {
    const url = buildProfileUrl(subject.svc, subject.usrSvcId);
    const res = await checkRelMe(url, subject.profilePageUrl, {
      allowPrivate: ctx.config.fetchAllowPrivate,
      alsoAccepted: await userProvenUrls(ctx, subject.userRef, subject.identityId),
      // The profile page is read where a test setting may stand in for the service (polite-fetch.ts).
      fetchImpl: (target, opts) => (subject.fetch ?? safeFetch)(testOriginOf(ctx, target), opts),
    });
    const base = { method: 'rel-me' as const, evidenceUrl: url, ...(res.status !== undefined ? { status: res.status } : {}) };
    const where = `looked for a rel="me" link to ${subject.profilePageUrl} on ${url}`;
    if (res.outcome === 'verified') return { ...base, result: 'verified', detail: res.detail };
    if (res.outcome === 'unreachable') {
      if (res.status !== undefined && GONE.has(res.status)) return { ...base, result: 'absent', detail: `${where}: the page answered HTTP ${res.status}` };
      return { ...base, result: 'transient', detail: `${where}: ${res.detail}`, ...(res.retryAfterMs !== undefined ? { retryAfterMs: res.retryAfterMs } : {}) };
    }
    return { ...base, result: 'absent', detail: `${where}: ${res.detail}` };
  },
};
