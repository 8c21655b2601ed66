// Verification coverage: of the catalogue's most popular enabled services (the order partners see
// with service_details/popularity: opted-in users, ties by name), which a person can verify on
// their own, and by which methods. Each checker in CHECKERS is asked with `appliesTo`, and counts
// only where it is dependable (rel="me" is tried on any page, but few services render the links).
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import { buildProfileUrl, matchesPattern } from '../catalogue/profile-url.js';
import type { AppContext } from '../context.js';
import { CHECKERS } from './checkers.js';

/** A provider connection (`oauth`) proves only where the operator configured that provider: not counted here. */
const ON_ANY_INSTALL = CHECKERS.filter((c) => c.method !== 'oauth');
import type { VerificationChecker, VerificationMethod } from './methods.js';

export interface Coverage {
  top: number;
  verifiable: number;
  services: { svcId: string; methods: VerificationMethod[] }[];
}

// Identifiers of the usual shapes; a service's first that fits its pattern and gives a profile
// address stands for "an ordinary identity there" (a Mastodon handle names its instance, a website its domain).
const SAMPLE_IDENTIFIERS = ['alice', 'alice_1', '1234567', 'alice@mastodon.social', '0000-0002-1825-0097', 'alice.example'];

function sampleIdentifier(svc: CatalogueEntry): string | null {
  for (const id of SAMPLE_IDENTIFIERS) {
    if (!matchesPattern(svc.regexCheck, id)) continue;
    if (buildProfileUrl(svc, id) !== '' || (svc.svcLeftURL === '' && svc.urlBuilder === null)) return id;
  }
  return null;
}

export async function verificationCoverage(
  ctx: AppContext,
  top: number,
  checkers: readonly Pick<VerificationChecker, 'method' | 'appliesTo' | 'dependable'>[] = ON_ANY_INSTALL,
): Promise<Coverage> {
  const { list } = await ctx.catalogue.ordered('popularity');
  const services = list.slice(0, top).map((svc) => {
    const id = sampleIdentifier(svc);
    const methods = id === null ? [] : [...new Set(checkers.filter((c) => c.appliesTo(svc, id) && (c.dependable?.(svc) ?? true)).map((c) => c.method))];
    return { svcId: svc.svcId, methods };
  });
  return { top, verifiable: services.filter((s) => s.methods.length > 0).length, services };
}
