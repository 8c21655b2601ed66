// The operator CLI, run in process (`runIdsvc`) against the database a running server uses: what it
// changes takes effect without a restart. test/cli/spawned.test.ts runs it as a real process.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IdsvcClient, IdsvcError } from '@idsvc/client';
import { projectRoot } from '../../src/paths.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const cli = (args: string[], stdin = '') => runCli(t, args, { stdin });

test('partner create --json prints keys that work at once on the running server', async () => {
  const r = await cli(['--json', 'partner', 'create', '--name', 'x', '--origin', 'https://a.example/path']);
  assert.equal(r.code, 0, r.stderr);
  const keys = JSON.parse(r.stdout) as { api_key: string; api_token: string };
  assert.match(keys.api_key, /^[a-z0-9]{32}$/);
  assert.match(keys.api_token, /^[a-z0-9]{40}$/);
  const client = new IdsvcClient({ baseUrl: t.baseUrl, apiKey: keys.api_key, apiToken: keys.api_token });
  assert.deepEqual(await client.updateService('rita@example.org', 'github', 'rita'), { svcId: 'github', usrSvcId: 'rita' });
  const show = JSON.parse((await cli(['--json', 'partner', 'show', keys.api_key])).stdout);
  assert.deepEqual(show.origins, ['https://a.example']);

  const rotated = JSON.parse((await cli(['--json', 'partner', 'rotate-token', keys.api_key, '--grace', '0'])).stdout) as { api_token: string };
  await assert.rejects(client.updateService('rita@example.org', 'github', 'rita'), (e: unknown) => e instanceof IdsvcError && e.code === 'invalid_api_token');
  const fresh = new IdsvcClient({ baseUrl: t.baseUrl, apiKey: keys.api_key, apiToken: rotated.api_token });
  assert.ok(await fresh.updateService('rita@example.org', 'github', 'rita'));

  assert.equal((await cli(['partner', 'suspend', keys.api_key])).code, 0);
  await assert.rejects(fresh.returnServices('rita@example.org'), (e: unknown) => e instanceof IdsvcError && e.code === 'forbidden');
  assert.equal((await cli(['partner', 'resume', keys.api_key])).code, 0);
  assert.ok(await fresh.returnServices('rita@example.org'));
  assert.equal((await cli(['partner', 'set', keys.api_key, '--trusted', 'on'])).code, 0);
  assert.equal(JSON.parse((await cli(['--json', 'partner', 'show', keys.api_key])).stdout).trusted, true);
  const list = await cli(['partner', 'list']);
  assert.match(list.stdout, new RegExp(keys.api_key));
  assert.ok(!list.stdout.includes(rotated.api_token), 'tokens are never listed');
  const bad = await cli(['partner', 'show', 'nope']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /no partner/);
});

test('user create reads the password from stdin; set, set-pro, show and delete', async () => {
  const r = await cli(['--json', 'user', 'create', '--email', 'sam@example.org', '--user-id', 'sam', '--opt-in'], 'a long enough password\n');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).opted_in, true);
  const P = await t.partner();
  await P.client.syncUser('sam', { email: 'sam@example.org', password: 'a long enough password' });
  const short = await cli(['user', 'create', '--email', 'tom@example.org', '--user-id', 'tom'], 'short\n');
  assert.equal(short.code, 1);
  assert.match(short.stderr, /at least 8/);
  const dup = await cli(['user', 'create', '--email', 'SAM@example.org', '--user-id', 'sam2'], 'a long enough password\n');
  assert.equal(dup.code, 1);
  assert.match(dup.stderr, /already exists/);

  assert.equal((await cli(['user', 'set', 'sam', '--nickname', 'Sammy', '--city', 'Bergen', '--public', 'nickname'])).code, 0);
  assert.deepEqual(await P.publicClient.returnProfile('sam', { profileType: 'public' }), {
    userId: 'sam',
    url: `${t.config.baseUrl}/u/sam`,
    nickname: 'Sammy',
  });
  assert.equal((await cli(['user', 'set', 'sam', '--public', 'nickname,shoe'])).code, 1);
  await P.client.updateService('sam', 'github', 'sam_gh');
  const other = await t.partner();
  assert.equal((await other.client.returnServices('sam', { profileType: 'public' }))[0]?.usrSvcId, undefined);
  assert.equal((await cli(['user', 'set-pro', 'sam'])).code, 0);
  assert.equal((await other.client.returnServices('sam', { profileType: 'public' }))[0]?.usrSvcId, 'sam_gh');
  assert.equal((await cli(['user', 'set', 'sam', '--opt-out'])).code, 0);
  await assert.rejects(P.publicClient.returnServices('sam', { profileType: 'public' }), (e: unknown) => e instanceof IdsvcError && e.code === 'not_found');
  const shown = JSON.parse((await cli(['--json', 'user', 'show', 'sam@example.org'])).stdout);
  assert.equal(shown.opted_in, false);
  assert.equal(shown.profile.city, 'Bergen');
  assert.ok(!JSON.stringify(shown).includes('argon2'), 'no password hash in output');
  assert.equal((await cli(['user', 'delete', 'sam'])).code, 0);
  assert.equal((await cli(['user', 'show', 'sam'])).code, 1);
  const events = await t.ctx.db.kysely.selectFrom('outbox').select('event_type').where('partner_id', '=', P.id).execute();
  // P is linked: the profile change (nickname, city) is announced to it, then the opt-out and the deletion.
  assert.deepEqual(
    events.map((e) => e.event_type),
    ['profile.updated', 'user.hidden', 'user.deleted'],
  );
  // The partner's own pushes are still its own.
  assert.equal((await P.client.returnServices('sam@example.org'))[0]?.usrSvcId, 'sam_gh');
});

test('catalogue: export --json is exactly what import reads; set and disable take effect live', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-cat-'));
  const file = path.join(dir, 'cat.json');
  assert.equal((await cli(['--json', 'catalogue', 'export', file])).code, 0);
  const shipped = fs.readFileSync(path.join(projectRoot, 'catalogue/services.json'), 'utf8');
  assert.equal(fs.readFileSync(file, 'utf8'), shipped, 'a fresh database exports the shipped file byte for byte');
  const imported = await cli(['--json', 'catalogue', 'import', file]);
  assert.equal(imported.code, 0, imported.stderr);
  assert.deepEqual(JSON.parse(imported.stdout), { added: 0, updated: JSON.parse(shipped).services.length });

  const P = await t.partner();
  assert.equal((await cli(['catalogue', 'disable', 'github'])).code, 0);
  await assert.rejects(P.client.serviceDetails({ svcId: 'github' }), (e: unknown) => e instanceof IdsvcError && e.code === 'not_found');
  assert.equal((await cli(['catalogue', 'disable', 'github', '--enable'])).code, 0);
  assert.equal((await P.client.serviceDetails({ svcId: 'github' }))[0]?.svcName, 'GitHub');

  const added = await cli(['catalogue', 'set', 'example', '--name', 'Example', '--left-url', 'https://example.net/~', '--url', 'https://example.net/']);
  assert.equal(added.code, 0, added.stderr);
  assert.equal((await P.client.serviceDetails({ svcId: 'example' }))[0]?.svcLeftURL, 'https://example.net/~');
  const bad = await cli(['catalogue', 'set', 'example', '--pattern', '([unclosed']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /regexCheck/);
  const one = JSON.parse(shipped) as { services: Record<string, unknown>[] };
  fs.writeFileSync(file, JSON.stringify({ format: 'idsvc-catalogue/1', services: [{ ...one.services[0], svcId: 'Bad Id' }] }));
  const badImport = await cli(['catalogue', 'import', file]);
  assert.equal(badImport.code, 1);
  assert.match(badImport.stderr, /svcId/);
  fs.rmSync(dir, { recursive: true });
});
