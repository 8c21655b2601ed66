// What each consent lets others do, said once for every page that asks for it or shows it (sign-up,
// the account page). The words name every path that finds a person under that consent, and
// test/site/consent.test.ts holds each path to them: whoever changes who can find whom changes
// these sentences in the same commit.

/** Everyone this reaches once the user is opted in (and the address proven). */
export const OPT_IN_REACH =
  'anyone who knows your e-mail address (or its MD5 or SHA-256 hash) or your userId sees your identities and your public profile fields: partner sites through their API, and any site or app through the Gravatar-compatible profile and avatar.';

/** What being discoverable adds, only while opted in. */
export const DISCOVERABLE_ADDS =
  "partner sites can look up who claims one of your identities (reverse lookup) and list you, with your userId, when one of their users shares an address book that holds your address (contact matching); WebFinger finds your page by your plain e-mail address (mailto:); and your Gravatar-compatible profile, asked for by your userId, carries your address's hash.";

/** Said wherever the user is not visible (hidden, or the address not yet proven). */
export const NOT_VISIBLE = 'partner sites and visitors see nothing of you';

/** The same, in one breath, for the sign-up form. */
export const DISCOVERABLE_ADDS_SHORT =
  "found by an identity you claim, in address books partner sites match, and by your plain address through WebFinger; your address's hash shown with your userId";

/**
 * How long a hidden person may still be shown by caches between a reader and this service (a CDN, a
 * proxy): PUBLIC_CACHE_MAX_AGE plus PUBLIC_CACHE_STALE (http/cache-headers.ts). This service itself
 * stops at once.
 */
export function cacheDelay(seconds: number): string {
  if (seconds === 0) return 'We stop showing you the moment you opt out, and web caches in between must ask us first, so they stop too.';
  const span = seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? '' : 's'}` : `${seconds} seconds`;
  return `We stop showing you the moment you opt out; copies that web caches in between (a CDN, a proxy) made of your public answers may still be shown for up to ${span}.`;
}
