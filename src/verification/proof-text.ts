// The texts that name an account wherever a person puts a proof (a bio, a DNS TXT record, a
// profile description): its public profile URL on this idsvc, and a short form for places where
// space is tight. Either one, found where the method looks, ties the identity to the account.
import type { AppContext } from '../context.js';

/** `${BASE_URL}/u/<userId>`: the account's public profile page. */
export function profilePageUrl(ctx: AppContext, userId: string): string {
  return `${ctx.config.baseUrl}/u/${userId}`;
}

/** `idsvc:<host>:<userId>`, host with its port when BASE_URL has one. */
export function shortProofText(ctx: AppContext, userId: string): string {
  return `idsvc:${new URL(ctx.config.baseUrl).host}:${userId}`;
}

/** Both proof texts of an account, the long one first. */
export function proofTexts(ctx: AppContext, userId: string): [string, string] {
  return [profilePageUrl(ctx, userId), shortProofText(ctx, userId)];
}

/**
 * Whether `text` holds one of the account's proof texts as a whole token: the profile URL with or
 * without a trailing slash, or the short form, each followed by nothing or by a character that
 * cannot continue a userId (so `/u/alice` is not found in `/u/alicebob`).
 */
export function holdsProofText(ctx: AppContext, userId: string, text: string): boolean {
  for (const wanted of proofTexts(ctx, userId)) {
    let from = 0;
    for (;;) {
      const at = text.indexOf(wanted, from);
      if (at === -1) break;
      const next = text.charAt(at + wanted.length);
      if (next === '' || !/[A-Za-z0-9_.-]/.test(next) || (next === '.' && !/[A-Za-z0-9_-]/.test(text.charAt(at + wanted.length + 1)))) return true;
      from = at + 1;
    }
  }
  return false;
}
