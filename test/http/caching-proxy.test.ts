// A real caching proxy in front of idsvc (nginx with proxy_cache, as docs/operations.md shows it),
// on SQLite and PostgreSQL: a repeated public read is served by nginx ($upstream_cache_status HIT),
// revalidated with a 304 once older than the max-age (REVALIDATED); answers with proof are never
// served from its cache; a person who opts out stops being served by it once the max-age has passed.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { findUserByUserId } from '../../src/repositories/users.js';
import { setOptIn } from '../../src/services/accounts.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { SiteClient } from '../site/helpers.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const NGINX = '/usr/sbin/nginx';
/** Long enough that two reads in a row fall within it on a busy machine. */
const MAX_AGE_SECONDS = 5;

let t: TestApp;
let P: { apiKey: string; apiToken: string };
let nginx: ChildProcess;
let dir: string;
let proxy: string;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function listening(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    await sleep(50);
  }
  throw new Error(`nginx did not listen: ${fs.readFileSync(path.join(dir, 'error.log'), 'utf8')}`);
}

before(async () => {
  t = await startTestApp({ PUBLIC_CACHE_MAX_AGE: String(MAX_AGE_SECONDS), PUBLIC_CACHE_STALE: '0' });
  P = await t.partner();
  for (const [userId, svcId] of [
    ['alice', 'github'],
    ['hilda', 'gitlab'],
  ] as const) {
    const created = await t.user({ email: `${userId}@example.org`, userId, password: `${userId} has a long password` });
    const user = (await findUserByUserId(t.ctx.db, created.userId))!;
    const svc = (await t.ctx.catalogue.get()).byId.get(svcId)!;
    await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, `${userId}-1`, { partnerId: null }, t.clock.now()));
  }
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-nginx-'));
  const port = await freePort();
  // One process in the foreground (no workers switching user), every path inside the test's directory.
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  proxy_cache_path ${dir}/cache keys_zone=idsvc:1m max_size=10m inactive=10m;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass ${t.baseUrl};
      proxy_cache idsvc;
      proxy_cache_revalidate on;
      proxy_cache_use_stale updating;
      proxy_set_header Host $host;
      add_header X-Cache-Status $upstream_cache_status always;
    }
  }
}
`,
  );
  nginx = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], { stdio: 'ignore' });
  proxy = `http://127.0.0.1:${port}`;
  await listening(port);
});

after(async () => {
  if (nginx && nginx.exitCode === null) {
    const exited = new Promise((resolve) => nginx.once('exit', resolve));
    nginx.kill('SIGTERM');
    await exited;
  }
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function viaProxy(pathname: string, headers: Record<string, string> = {}): Promise<{ status: number; cache: string | null; body: string }> {
  const res = await fetch(`${proxy}${pathname}`, { headers });
  return { status: res.status, cache: res.headers.get('x-cache-status'), body: await res.text() };
}

test('public reads are served by nginx and revalidated with 304; answers with proof never are; an opt-out reaches it within the max-age', async () => {
  const sha = (email: string) => createHash('sha256').update(email).digest('hex');
  const publicReads = (userId: string) => [`/api/return_services/${P.apiKey}/${userId}/public`, `/v3/profiles/${sha(`${userId}@example.org`)}`, `/u/${userId}`];
  for (const userId of ['alice', 'hilda']) {
    for (const read of publicReads(userId)) {
      const first = await viaProxy(read);
      assert.equal(first.status, 200, read);
      assert.equal(first.cache, 'MISS', read);
      const second = await viaProxy(read);
      assert.equal(second.cache, 'HIT', read);
      assert.equal(second.body, first.body);
    }
  }

  // Proof: a Bearer token, a session, the widget's per-user data; each read reaches idsvc.
  const client = new SiteClient(t.baseUrl);
  assert.equal((await client.logIn('alice@example.org', 'alice has a long password')).status, 303);
  const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const proven: [string, Record<string, string>][] = [
    [`/v3/profiles/${sha('alice@example.org')}`, { authorization: `Bearer ${P.apiToken}` }],
    ['/u/alice', { cookie }],
    [`/api/service_collection_widget/${P.apiKey}/alice/TRUE`, {}],
  ];
  for (const [read, headers] of proven) {
    for (let i = 0; i < 2; i++) {
      const answer = await viaProxy(read, headers);
      assert.equal(answer.status, 200, read);
      assert.equal(answer.cache, 'MISS', `${read} is never served from the proxy's cache`);
    }
  }
  // The api_token goes in a POST body; nginx does not cache POST, and idsvc says private anyway.
  const post = await fetch(`${proxy}/api/return_services/${P.apiKey}/alice/public`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `api_token=${P.apiToken}`,
  });
  assert.equal(post.status, 200);
  assert.equal(post.headers.get('cache-control'), 'private, no-store');
  assert.notEqual(post.headers.get('x-cache-status'), 'HIT');

  // Hilda opts out: idsvc answers 404 at once; the proxy's copy lasts at most the max-age.
  await setOptIn(t.ctx, (await findUserByUserId(t.ctx.db, 'hilda'))!, false);
  for (const read of publicReads('hilda')) assert.equal((await fetch(`${t.baseUrl}${read}`)).status, 404, read);
  await sleep(MAX_AGE_SECONDS * 1000 + 1500);
  for (const read of publicReads('hilda')) {
    const answer = await viaProxy(read);
    assert.equal(answer.status, 404, read);
    assert.doesNotMatch(answer.body, /hilda-1/);
    assert.notEqual(answer.cache, 'HIT', read);
    // The 404 is no-store: the next read asks idsvc again.
    assert.notEqual((await viaProxy(read)).cache, 'HIT', read);
  }
  // Alice's copies are older than the max-age too: revalidated with a 304 from idsvc, then served again.
  for (const read of publicReads('alice')) {
    const answer = await viaProxy(read);
    assert.equal(answer.status, 200, read);
    assert.equal(answer.cache, 'REVALIDATED', read);
    assert.equal((await viaProxy(read)).cache, 'HIT', read);
  }
});
