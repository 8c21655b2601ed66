// The account's proof texts and how they are found, and Retry-After as the polite fetcher reads it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AppContext } from '../../src/context.js';
import { retryAfterMs } from '../../src/verification/polite-fetch.js';
import { holdsProofText, proofTexts } from '../../src/verification/proof-text.js';

const ctx = { config: { baseUrl: 'https://id.example:8443' } } as unknown as AppContext;

test('two proof texts: the profile URL and idsvc:<host>:<userId>, the host with its port', () => {
  assert.deepEqual(proofTexts(ctx, 'alice'), ['https://id.example:8443/u/alice', 'idsvc:id.example:8443:alice']);
});

test('a proof text is found only as a whole', () => {
  const yes = [
    'https://id.example:8443/u/alice',
    'me: https://id.example:8443/u/alice.',
    'https://id.example:8443/u/alice/ and more',
    '(idsvc:id.example:8443:alice)',
    'a\nidsvc:id.example:8443:alice\nb',
  ];
  for (const text of yes) assert.equal(holdsProofText(ctx, 'alice', text), true, text);
  const no = [
    'https://id.example:8443/u/alicebob',
    'https://id.example:8443/u/alice_2',
    'idsvc:id.example:8443:alice.bob',
    'https://id.example/u/alice',
    'idsvc:other.example:alice',
    '',
  ];
  for (const text of no) assert.equal(holdsProofText(ctx, 'alice', text), false, text);
});

test('Retry-After: seconds or an HTTP date, capped at a day; anything else is ignored', () => {
  const now = Date.UTC(2026, 0, 1);
  assert.equal(retryAfterMs('120', now), 120_000);
  assert.equal(retryAfterMs(new Date(now + 90_000).toUTCString(), now), 90_000);
  assert.equal(retryAfterMs(new Date(now - 90_000).toUTCString(), now), 0);
  assert.equal(retryAfterMs('9999999', now), 24 * 3600_000);
  assert.equal(retryAfterMs('soon', now), null);
  assert.equal(retryAfterMs(undefined, now), null);
});
