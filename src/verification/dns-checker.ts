// A domain by DNS (method `dns`): the person's own domain carries one of the account's proof texts
// in a TXT record, at `_idsvc.<domain>` or at the domain itself (the apex); either one proves it.
// It applies to identities whose profile URL is a domain's root: the shipped `website` service (URL
// builder `website`) when its address has no path or query, and a catalogue service an operator adds
// with svcLeftURL `https://` (or `http://`), svcRightURL empty or `/` and no URL builder
// (docs/verification.md). A page below the root (`https://alice.github.io/blog/`, a shared host's
// `https://example.com/~alice`) is not: whoever holds the domain's DNS need not be its author.
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import { websiteRootHost } from '../catalogue/profile-url.js';
import type { CheckOutcome, VerificationChecker } from './methods.js';
import { holdsProofText } from './proof-text.js';
import { dnsFailureText, hostName, resolveTxt } from './dns-txt.js';

/** The domain an identity on an own-domain service names, or null when the service is not one. */
export function ownDomainOf(svc: CatalogueEntry, usrSvcId: string): string | null {
  if (svc.urlBuilder === 'website') {
    const host = websiteRootHost(usrSvcId);
    return host === null ? null : hostName(host);
  }
  const leftIsScheme = svc.svcLeftURL === 'https://' || svc.svcLeftURL === 'http://';
  const rightIsEmpty = svc.svcRightURL === '' || svc.svcRightURL === '/';
  if (!leftIsScheme || !rightIsEmpty || svc.urlBuilder !== null) return null;
  return hostName(usrSvcId);
}

export const dnsChecker: VerificationChecker = {
  method: 'dns',
  appliesTo: (svc, usrSvcId) => ownDomainOf(svc, usrSvcId) !== null,
  async check(ctx, subject): Promise<CheckOutcome> {
    const domain = ownDomainOf(subject.svc, subject.usrSvcId);
    if (domain === null) return { method: 'dns', result: 'absent', evidenceUrl: null, detail: `${subject.usrSvcId} is not a domain name or a domain's root` };
    const looked: string[] = [];
    let transient: string | null = null;
    for (const name of [`_idsvc.${domain}`, domain]) {
      const evidenceUrl = `dns:TXT:${name}`;
      const answer = await resolveTxt(ctx, name);
      if (answer.ok) {
        if (answer.records.some((r) => holdsProofText(ctx, subject.userId, r))) {
          return { method: 'dns', result: 'verified', evidenceUrl, detail: `a TXT record at ${name} holds the proof text` };
        }
        looked.push(`${name}: ${answer.records.length} TXT record(s), none with the proof text`);
      } else {
        looked.push(`${name}: ${dnsFailureText(answer.code)}`);
        if (!answer.definite) transient ??= name;
      }
    }
    const detail = `looked for a TXT record holding ${subject.profilePageUrl} (or its short form) — ${looked.join('; ')}`;
    if (transient !== null) return { method: 'dns', result: 'transient', evidenceUrl: `dns:TXT:${transient}`, detail };
    return { method: 'dns', result: 'absent', evidenceUrl: `dns:TXT:_idsvc.${domain}`, detail };
  },
};
