// A server loads the libraries of features few requests use (sharp for photos, the WebAuthn
// libraries for passkeys, undici for outbound requests, ioredis when Redis is configured) at their
// first use, not at start-up: they are the costliest modules to
// load, and each server, cluster worker and test app would pay for them at every start. The
// process's CommonJS module cache tells what was loaded (sharp's native libvips binding, under
// @img/, and the ASN.1 library that the WebAuthn package loads; nodemailer, also loaded at first
// use, is an ES module throughout and not listed there). This file imports nothing that loads them before the checks.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { preparePhoto } from '../../src/gravatar/photos.js';
import { relyingParty, startPasskeyLogin } from '../../src/services/passkeys.js';
import { safeFetch } from '../../src/verification/safe-fetch.js';
import { startTestApp } from '../helpers/app.js';
import { pngBomb } from '../../bench/abuse-cases.js';

const loaded = (pkg: string) => Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes(`/node_modules/${pkg}/`));

test('a started server that has answered pages has loaded neither sharp nor the WebAuthn libraries; each loads at its first use', async () => {
  const t = await startTestApp({ BASE_URL: 'http://localhost:3000' });
  try {
    for (const path of ['/healthz', '/', '/login', '/signup']) assert.equal((await fetch(t.baseUrl + path)).status, 200, path);
    assert.equal(loaded('@img'), false, 'sharp');
    assert.equal(loaded('@peculiar/asn1-schema'), false, 'WebAuthn');
    assert.equal(loaded('undici'), false, 'undici');
    assert.equal(loaded('ioredis'), false, 'ioredis, without REDIS_URL');

    // A picture refused from its header still goes through sharp (it reads the header).
    await assert.rejects(preparePhoto(pngBomb()));
    assert.equal(loaded('@img'), true, 'sharp after a photo');
    const rp = relyingParty(t.config);
    assert.ok(rp, 'passkeys are offered on localhost');
    await startPasskeyLogin(t.ctx, rp, 'an attempt');
    assert.equal(loaded('@peculiar/asn1-schema'), true, 'WebAuthn after a passkey log-in starts');
    assert.equal((await safeFetch(`${t.baseUrl}/healthz`, { allowPrivate: true })).ok, true);
    assert.equal(loaded('undici'), true, 'undici after an outbound request');
  } finally {
    await t.close();
  }
});
