// Going through a sign-in provider as a browser does: the button's form, the page that moves on to
// the provider, the provider's redirect back, and the callback.
import assert from 'node:assert/strict';
import type { SiteClient } from '../site/helpers.js';

/** The provider's authorization address a button leads to (the page's refresh target). */
export async function startAtProvider(client: SiteClient, slug: string, purpose: 'login' | 'connect', fields: Record<string, string> = {}): Promise<string> {
  const csrf = await client.csrf(purpose === 'login' ? '/login' : '/account/security');
  const start = await client.post(`/auth/${slug}/start`, { _csrf: csrf, purpose, ...fields });
  assert.equal(start.res.status, 200, start.body.slice(0, 300));
  const m = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(start.body);
  assert.ok(m, 'the page moves on to the provider');
  return m[1]!.replaceAll('&amp;', '&');
}

/** Where the provider sends the browser back to, as a path of the site. */
export async function providerRedirect(authorizeUrl: string): Promise<string> {
  const at = await fetch(authorizeUrl, { redirect: 'manual' });
  assert.equal(at.status, 302, `the provider answers the authorization request (${at.status})`);
  const back = new URL(at.headers.get('location') ?? '');
  return back.pathname + back.search;
}

/** The whole round trip; the callback's answer. */
export async function throughProvider(
  client: SiteClient,
  slug: string,
  purpose: 'login' | 'connect',
  fields: Record<string, string> = {},
): Promise<{ res: Response; body: string }> {
  return client.get(await providerRedirect(await startAtProvider(client, slug, purpose, fields)));
}
