// A pasted profile URL turned into a catalogue service and identifier, for the
// partner API, the site and discovery alike: one reading of the catalogue, one set of answers.
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import { matchProfileUrl, type ProfileUrlCandidate } from '../catalogue/match-profile-url.js';
import type { AppContext } from '../context.js';

export type RecognisedUrl =
  | { kind: 'match'; svc: CatalogueEntry; usrSvcId: string }
  | { kind: 'ambiguous'; candidates: ProfileUrlCandidate[] }
  | { kind: 'none' };

/**
 * Which enabled catalogue service the URL is a profile on, against the catalogue as it is now.
 * `orWebsite` is for an address the person pastes as their own: one that no service explains is
 * then their website. A partner's push and a discovery walk never ask it: for them an unknown
 * address is not a service.
 */
export async function recogniseProfileUrl(ctx: AppContext, url: string, options: { orWebsite?: boolean } = {}): Promise<RecognisedUrl> {
  const snap = await ctx.catalogue.get();
  const m = matchProfileUrl(snap.alphanumeric, url, options);
  if (m.kind !== 'match') return m;
  const svc = snap.byId.get(m.svcId);
  return svc ? { kind: 'match', svc, usrSvcId: m.usrSvcId } : { kind: 'none' };
}
