// The proof text: what a person puts on another service to say "this account is mine on idsvc". It
// names the idsvc account in one of two forms, and finding either counts: the profile page URL
// (`${BASE_URL}/u/<userId>`, readable and a link where links show) and a short form
// `idsvc:<host>:<userId>` for fields with little room. A userId only ever has a-z, 0-9 and `_`, so a
// match must not run on into another such character: the proof of `ann` is not found in `anna`'s.

export interface ProofForms {
  profileUrl: string;
  short: string;
}

export function proofForms(baseUrl: string, userId: string): ProofForms {
  return { profileUrl: `${baseUrl}/u/${userId}`, short: `idsvc:${new URL(baseUrl).host}:${userId}` };
}

/** The same forms from the profile page address the site already has (`${BASE_URL}/u/<userId>`). */
export function proofFormsOfPage(profilePageUrl: string, userId: string): ProofForms {
  return { profileUrl: profilePageUrl, short: `idsvc:${new URL(profilePageUrl).host}:${userId}` };
}

const WORD = /[a-z0-9_]/i;

function occursAlone(haystack: string, needle: string, before: RegExp | null): boolean {
  const h = haystack.toLowerCase();
  const n = needle.toLowerCase();
  for (let at = h.indexOf(n); at !== -1; at = h.indexOf(n, at + 1)) {
    const next = h[at + n.length];
    const prev = at > 0 ? h[at - 1] : undefined;
    if (next !== undefined && WORD.test(next)) continue;
    if (before && prev !== undefined && before.test(prev)) continue;
    return true;
  }
  return false;
}

/** Which form of the proof the text holds (contains) or is (equals), or null. Case does not matter: hosts and userIds are lower case. */
export function findProof(text: string, forms: ProofForms, relation: 'contains' | 'equals'): string | null {
  if (relation === 'equals') {
    const t = text.trim().toLowerCase();
    if (t === forms.profileUrl.toLowerCase() || t === `${forms.profileUrl.toLowerCase()}/`) return forms.profileUrl;
    return t === forms.short.toLowerCase() ? forms.short : null;
  }
  if (occursAlone(text, forms.profileUrl, null)) return forms.profileUrl;
  // `xidsvc:` or `my.idsvc:` is some other scheme or host, not this short form.
  if (occursAlone(text, forms.short, /[a-z0-9_.-]/i)) return forms.short;
  return null;
}
