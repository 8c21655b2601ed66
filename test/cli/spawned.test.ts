// The `idsvc` command as an operator runs it, one real process per command group: arguments,
// environment, standard input and output and the exit code go through the process's own streams
// (main.ts) rather than the in-process entry the other CLI tests use. `serve` is spawned by
// test/cli/startup-errors.test.ts, test/ops/shutdown.test.ts and others.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestApp, TEST_DB, type TestApp } from '../helpers/app.js';
import { spawnCli } from '../helpers/cli.js';

let t: TestApp;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-spawned-'));
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test(`migrate and demo (${TEST_DB})`, async () => {
  const migrated = await spawnCli(t, ['migrate']);
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.equal(migrated.stdout, 'database is up to date\n');
  const demo = await spawnCli(t, ['--json', 'demo']);
  assert.equal(demo.code, 0, demo.stderr);
  assert.match((JSON.parse(demo.stdout) as { api_key: string }).api_key, /^[a-z0-9]{32}$/);
});

test(`partner: create, and a failure's message on stderr with exit 1 (${TEST_DB})`, async () => {
  const created = await spawnCli(t, ['--json', 'partner', 'create', '--name', 'Spawned']);
  assert.equal(created.code, 0, created.stderr);
  const key = (JSON.parse(created.stdout) as { api_key: string }).api_key;
  const listed = await spawnCli(t, ['partner', 'list']);
  assert.match(listed.stdout, new RegExp(key));
  const missing = await spawnCli(t, ['partner', 'show', 'nope']);
  assert.deepEqual([missing.code, missing.stdout], [1, '']);
  assert.match(missing.stderr, /^idsvc: no partner/);
});

test(`user: the password comes through standard input, its newline dropped (${TEST_DB})`, async () => {
  const r = await spawnCli(t, ['--json', 'user', 'create', '--email', 'spawned@example.org', '--user-id', 'spawned', '--opt-in'], {
    stdin: 'a long enough password\n',
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { userId: string }).userId, 'spawned');
  const P = await t.partner();
  await P.client.syncUser('spawned', { email: 'spawned@example.org', password: 'a long enough password' });
});

test(`catalogue: export to standard output, whole (${TEST_DB})`, async () => {
  const r = await spawnCli(t, ['catalogue', 'export']);
  assert.equal(r.code, 0, r.stderr);
  const { services } = JSON.parse(r.stdout) as { services: unknown[] };
  assert.ok(services.length > 100, `${services.length} services exported`);
});

test(`mail list (${TEST_DB})`, async () => {
  const r = await spawnCli(t, ['--json', 'mail', 'list']);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(Array.isArray(JSON.parse(r.stdout)));
});

test(`backup (${TEST_DB})`, async () => {
  const file = path.join(dir, 'copy.sqlite');
  const r = await spawnCli(t, ['backup', file]);
  if (TEST_DB === 'sqlite') {
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^backup written to .* integrity ok\)\n$/);
    assert.ok(fs.statSync(file).size > 0);
  } else {
    assert.equal(r.code, 1);
    assert.match(r.stderr, /pg_dump/);
  }
});

test('usage errors and --help come from commander, with its exit codes', async () => {
  const unknown = await spawnCli(t, ['no-such-command']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /unknown command 'no-such-command'/);
  const help = await spawnCli(t, ['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: idsvc /);
});
