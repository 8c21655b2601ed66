// The texts that name an account wherever a person puts a proof (a bio, a DNS TXT record, a
// profile description, a gist): its public profile URL on this idsvc, and a short form for places
// where space is tight. Either one, found where the method looks, ties the identity to the account.

/** What the proof texts are made of: the site's address (an AppContext is one). */
interface Site {
  readonly config: { readonly baseUrl: string };
}

/** `${BASE_URL}/u/<userId>`: the account's public profile page. */
export function profilePageUrl(ctx: Site, userId: string): string {
  return `${ctx.config.baseUrl}/u/${userId}`;
}

/** `idsvc:<host>:<userId>`, host with its port when BASE_URL has one. */
export function shortProofText(ctx: Site, userId: string): string {
  return `idsvc:${new URL(ctx.config.baseUrl).host}:${userId}`;
}

/** Both proof texts of an account, the long one first. */
export function proofTexts(ctx: Site, userId: string): [string, string] {
  return [profilePageUrl(ctx, userId), shortProofText(ctx, userId)];
}

/** The two forms by name, for the proof providers' readers and the pages that show them. */
export interface ProofForms {
  profileUrl: string;
  short: string;
}

export function proofForms(baseUrl: string, userId: string): ProofForms {
  return proofFormsOfPage(`${baseUrl}/u/${userId}`, userId);
}

/** The same forms from the profile page address the site already has (`${BASE_URL}/u/<userId>`). */
export function proofFormsOfPage(profilePageUrl: string, userId: string): ProofForms {
  return { profileUrl: profilePageUrl, short: `idsvc:${new URL(profilePageUrl).host}:${userId}` };
}

/**
 * Whether `text` holds `wanted` as a whole token: followed by nothing or by a character that cannot
 * continue a userId (so `/u/alice` is not found in `/u/alicebob`); a dot counts as the end of a
 * sentence only when no word character follows it.
 */
function holdsWhole(text: string, wanted: string): boolean {
  let from = 0;
  for (;;) {
    const at = text.indexOf(wanted, from);
    if (at === -1) return false;
    const next = text.charAt(at + wanted.length);
    if (next === '' || !/[A-Za-z0-9_.-]/.test(next) || (next === '.' && !/[A-Za-z0-9_-]/.test(text.charAt(at + wanted.length + 1)))) return true;
    from = at + 1;
  }
}

/**
 * Whether `text` holds one of the account's proof texts as a whole token: the profile URL with or
 * without a trailing slash, or the short form.
 */
export function holdsProofText(ctx: Site, userId: string, text: string): boolean {
  return proofTexts(ctx, userId).some((wanted) => holdsWhole(text, wanted));
}

/**
 * Which form of the proof the text holds (`contains`, as holdsProofText finds it) or is (`equals`:
 * the whole text, trimmed, a trailing slash allowed after the URL), or null.
 */
export function findProof(text: string, forms: ProofForms, relation: 'contains' | 'equals'): string | null {
  if (relation === 'equals') {
    const t = text.trim();
    if (t === forms.profileUrl || t === `${forms.profileUrl}/`) return forms.profileUrl;
    return t === forms.short ? forms.short : null;
  }
  if (holdsWhole(text, forms.profileUrl)) return forms.profileUrl;
  return holdsWhole(text, forms.short) ? forms.short : null;
}
