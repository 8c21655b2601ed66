// The demo partner of a first start (issue 16): never on a production database unless asked for,
// and its api_token never in the log stream: it is in a file only the server's user can read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { IdsvcClient } from '@idsvc/client';
import { TEST_DB } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { servedForThisFile, stopIdsvc, type TestDatabase } from '../helpers/serve.js';

const { database, serve } = servedForThisFile();

/** Beside the SQLite database; with PostgreSQL in ./data of the directory the server runs in. */
const keysFileOf = (db: TestDatabase) => path.join(db.sqliteFile ? path.dirname(db.sqliteFile) : path.join(db.dir, 'data'), 'demo-partner.json');

async function partnerCount(db: TestDatabase): Promise<number> {
  const listed = await runCli({ cliEnv: db.env }, ['partner', 'list', '--json']);
  assert.equal(listed.code, 0, listed.stderr);
  return (JSON.parse(listed.stdout) as unknown[]).length;
}

test(`NODE_ENV=production: no demo partner unless --demo asks for one (${TEST_DB})`, async () => {
  const db = database('demo');
  const plain = await serve({ ...db.env, NODE_ENV: 'production', LOG_LEVEL: 'info' }, [], { cwd: db.dir });
  assert.equal(await stopIdsvc(plain), 0);
  assert.equal(await partnerCount(db), 0);
  assert.doesNotMatch(plain.stdout(), /demo partner/i);
  assert.equal(fs.existsSync(keysFileOf(db)), false);

  const asked = await serve({ ...db.env, NODE_ENV: 'production', LOG_LEVEL: 'info' }, ['--demo'], { cwd: db.dir });
  assert.equal(await stopIdsvc(asked), 0);
  assert.equal(await partnerCount(db), 1);
  assert.ok(fs.existsSync(keysFileOf(db)));
});

test(`outside production a first start creates a demo partner: one log line, the token only in a 0600 file (${TEST_DB})`, async () => {
  const db = database('demo');
  const served = await serve({ ...db.env, LOG_LEVEL: 'info' }, [], { cwd: db.dir });
  const announced = await served.waitFor(/demo partner was created/);
  const keysFile = keysFileOf(db);
  assert.equal(fs.statSync(keysFile).mode & 0o777, 0o600);
  const keys = JSON.parse(fs.readFileSync(keysFile, 'utf8')) as { api_key: string; api_token: string };
  assert.match(keys.api_token, /^[a-z0-9]{40}$/);

  // One line in the log format, naming the file, with the public api_key but not the token.
  const line = JSON.parse(announced) as { level: number; msg: string; apiKey: string; keysFile: string };
  assert.equal(line.level, 40);
  assert.equal(line.apiKey, keys.api_key);
  assert.equal(line.keysFile, keysFile);
  for (const l of served
    .stdout()
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{')))
    assert.doesNotThrow(() => JSON.parse(l), l);

  // The keys work.
  const client = new IdsvcClient({ baseUrl: served.url, apiKey: keys.api_key, apiToken: keys.api_token });
  assert.equal((await client.updateService('alice', 'github', 'alice-gh')).usrSvcId, 'alice-gh');
  assert.equal(await stopIdsvc(served), 0);
  assert.equal(served.stdout().includes(keys.api_token), false, 'the token is not on stdout (not a terminal)');
  assert.equal(served.stderr().includes(keys.api_token), false);

  // A second start leaves the partners as they are.
  const again = await serve({ ...db.env, LOG_LEVEL: 'info' }, [], { cwd: db.dir });
  assert.equal(await stopIdsvc(again), 0);
  assert.doesNotMatch(again.stdout(), /demo partner/);
  assert.equal(await partnerCount(db), 1);
});
