// The shipped catalogue's data: each enabled service's profile template stays on the service's own
// domain (exceptions listed with why in scripts/generate-catalogue.ts), the services an operator would
// not show to partners ship disabled, and a person's website and Mastodon on any instance ship enabled.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadCatalogueFile } from '../../src/catalogue/catalogue-file.js';
import { buildProfileUrl } from '../../src/catalogue/profile-url.js';
import { ownDomainOf } from '../../src/verification/dns-checker.js';
import { DISABLED_BY_DEFAULT, OTHER_DOMAIN_PROFILES, SHERLOCK_FIXES } from '../../scripts/generate-catalogue.js';

const catalogue = loadCatalogueFile();
const byId = new Map(catalogue.map((e) => [e.svcId, e]));

/** The last two labels of a host, without a trailing dot: enough to tell one site from another here. */
function siteOf(host: string): string {
  return host.replace(/\.$/, '').split('.').slice(-2).join('.');
}

/** Enabled services whose profile URLs leave the domain of their main address. */
function offDomain(): string[] {
  const out: string[] = [];
  for (const e of catalogue) {
    if (e.disabled || e.urlBuilder !== null || e.svcURL === '' || e.svcLeftURL === '') continue;
    const profile = new URL(buildProfileUrl(e, 'someone') || `${e.svcLeftURL}someone${e.svcRightURL}`);
    const main = new URL(e.svcURL);
    if (main.hostname.endsWith('.') || siteOf(main.hostname) !== siteOf(profile.hostname)) out.push(e.svcId);
  }
  return out.sort();
}

test("every enabled service's profile URLs are on its own domain, but for the listed exceptions", () => {
  assert.deepEqual(offDomain(), Object.keys(OTHER_DOMAIN_PROFILES).sort());
});

test('the data errors found are fixed in the shipped file', () => {
  assert.equal(byId.get('mastodonsocial')?.svcURL, 'https://mastodon.social/');
  assert.equal(byId.get('mastodonsocial')?.svcFavicon, 'https://mastodon.social/favicon.ico');
  for (const [id, fix] of Object.entries(SHERLOCK_FIXES)) assert.equal(byId.get(id)?.svcURL, fix.svcURL, id);
});

test('services an operator would not show to partners ship disabled, each with a reason', () => {
  for (const [id, why] of Object.entries(DISABLED_BY_DEFAULT)) {
    assert.equal(byId.get(id)?.disabled, true, id);
    assert.ok(why.length > 10, id);
  }
  assert.deepEqual(
    catalogue
      .filter((e) => e.disabled)
      .map((e) => e.svcId)
      .sort(),
    [...Object.keys(DISABLED_BY_DEFAULT), 'orcid', 'stackoverflow'].sort(),
  );
});

test('a website (any https URL, rel="me", DNS at a domain root) and Mastodon on any instance ship enabled', () => {
  const website = byId.get('website');
  assert.ok(website && !website.disabled);
  assert.equal(website.urlBuilder, 'website');
  // An identity that holds a bare domain, as the earlier host template took, keeps its site.
  assert.equal(buildProfileUrl(website, 'alice.example'), 'https://alice.example/');
  assert.equal(ownDomainOf(website, 'alice.example'), 'alice.example', 'the DNS method applies to a domain root');
  assert.equal(buildProfileUrl(website, 'https://alice.github.io/blog/'), 'https://alice.github.io/blog/');
  assert.equal(ownDomainOf(website, 'https://alice.github.io/blog/'), null, 'and not to a page below it');
  assert.equal(ownDomainOf(website, 'example.com/~alice'), null);
  assert.equal(buildProfileUrl(website, 'not a domain'), '');
  const mastodon = byId.get('mastodon');
  assert.ok(mastodon && !mastodon.disabled);
  assert.equal(buildProfileUrl(mastodon, 'alice@fosstodon.org'), 'https://fosstodon.org/@alice');
});
