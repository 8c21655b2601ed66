// The bytes of the `webhook-signature` header are what every partner's verifier checks
// (docs/webhooks.md, examples/partner-site): whatever library makes them, they must not change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { signatureHeader } from '../../src/jobs/webhooks.js';

const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7 + 1));
const secret = `whsec_${key.toString('base64')}`;
const body = JSON.stringify({ type: 'identity.updated', timestamp: '2026-01-02T03:04:05.000Z', data: { userId: 'u_ü', usrSvcId: 'ünïcödé 😀' } });

/** The scheme as docs/webhooks.md states it: base64 HMAC-SHA256, keyed by the secret's bytes, of "{id}.{timestamp}.{body}". */
const byHand = (k: Buffer, id: string, timestamp: number, payload: string) =>
  `v1,${createHmac('sha256', k).update(`${id}.${timestamp}.${payload}`).digest('base64')}`;

test('one secret: the v1 signature partners verify, byte for byte', () => {
  const header = signatureHeader([secret], 'msg_01J', 1767323045, body);
  assert.equal(header, 'v1,BFVckDQYYPwenSM+AWD/Z3cOI0rOiou4YJJ9ULw5AFo=');
  assert.equal(header, byHand(key, 'msg_01J', 1767323045, body));
});

test('a secret being rotated: one v1 signature per secret, current first, separated by one space', () => {
  for (let i = 0; i < 20; i++) {
    const a = randomBytes(32);
    const b = randomBytes(32);
    const id = `evt_${randomBytes(8).toString('hex')}`;
    const at = 1_700_000_000 + i * 977;
    const payload = JSON.stringify({ n: i, s: randomBytes(12).toString('latin1') });
    assert.equal(
      signatureHeader([`whsec_${a.toString('base64')}`, `whsec_${b.toString('base64')}`], id, at, payload),
      `${byHand(a, id, at, payload)} ${byHand(b, id, at, payload)}`,
    );
  }
  assert.equal(signatureHeader([], 'msg', 1, '{}'), '');
});
