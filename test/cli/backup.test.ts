// `idsvc backup FILE` (issue 16): on SQLite a consistent copy taken while the server keeps writing,
// which restores by copying it into place; on PostgreSQL the command says how to use pg_dump.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { IdsvcClient } from '@idsvc/client';
import { PG_URL, TEST_DB } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { servedForThisFile, stopIdsvc } from '../helpers/serve.js';

const { database, serve } = servedForThisFile();

test('backup while writes go on through HTTP; the copy restores into a fresh data directory and serves what it held', {
  skip: TEST_DB !== 'sqlite' && 'SQLite only; PostgreSQL is the next test',
}, async () => {
  const db = database('backup');
  const created = await runCli({ cliEnv: db.env }, ['partner', 'create', '--name', 'Backup test', '--json']);
  assert.equal(created.code, 0, created.stderr);
  const keys = JSON.parse(created.stdout) as { api_key: string; api_token: string };
  const served = await serve({ ...db.env, LOG_LEVEL: 'warn' });
  const client = new IdsvcClient({ baseUrl: served.url, apiKey: keys.api_key, apiToken: keys.api_token });
  await client.updateService('before_backup', 'github', 'was-there');

  // Writers keep pushing while the backup runs.
  let writing = true;
  let written = 0;
  let writeFailure: unknown;
  const writers = Array.from({ length: 4 }, async (_, w) => {
    for (let n = 0; writing; n++) {
      await client.updateService(`w${w}_${n}`, 'github', `v${n}`);
      written++;
    }
  }).map((writer) => writer.catch((error: unknown) => (writeFailure = error)));
  const writtenAtLeast = async (count: number): Promise<void> => {
    while (written < count) {
      if (writeFailure) throw writeFailure;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  // The backup starts only once writes are flowing, so it always copies a database being written;
  // how many land during the copy depends on the machine's speed, so the test does not count them.
  await writtenAtLeast(4);
  const backupFile = path.join(db.dir, 'backup.sqlite');
  const backup = await runCli({ cliEnv: db.env }, ['backup', backupFile, '--json']);
  const writtenBeforeBackupEnded = written;
  await writtenAtLeast(writtenBeforeBackupEnded + 4);
  writing = false;
  await Promise.all(writers);
  assert.equal(writeFailure, undefined);
  assert.equal(backup.code, 0, backup.stderr);
  const result = JSON.parse(backup.stdout) as { file: string; bytes: number; integrity: string };
  assert.equal(result.file, backupFile);
  assert.equal(result.integrity, 'ok');
  assert.equal(fs.statSync(backupFile).size, result.bytes);
  assert.equal(
    fs.readdirSync(db.dir).some((f) => f.includes('.partial-')),
    false,
    'no half-written file is left',
  );

  // A second backup never overwrites the first.
  const again = await runCli({ cliEnv: db.env }, ['backup', backupFile]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /exists already/);
  assert.equal(await stopIdsvc(served), 0);

  // Restore as docs/deploy.md says: the copy becomes the database file of a fresh data directory.
  const restoredDir = fs.mkdtempSync(path.join(db.dir, 'restored-'));
  const restoredFile = path.join(restoredDir, 'idsvc.sqlite');
  fs.copyFileSync(backupFile, restoredFile);
  const check = new SQLite(restoredFile, { readonly: true });
  assert.deepEqual(check.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
  check.close();
  const restored = await serve({ DATABASE_URL: `sqlite:${restoredFile}`, MAIL_DIR: path.join(restoredDir, 'mail'), LOG_LEVEL: 'warn' });
  const restoredClient = new IdsvcClient({ baseUrl: restored.url, apiKey: keys.api_key, apiToken: keys.api_token });
  const services = await restoredClient.returnServices('before_backup');
  assert.deepEqual(
    services.map((s) => [s.svcId, s.usrSvcId]),
    [['github', 'was-there']],
  );
  assert.equal(await stopIdsvc(restored), 0);
});

test('backup on PostgreSQL explains pg_dump and pg_restore, without printing the database URL', {
  skip: TEST_DB !== 'postgres' && 'PostgreSQL only',
}, async () => {
  const db = database('backup');
  const secretUrl = PG_URL.replace('postgres://root@', 'postgres://root:not-a-real-password@');
  const answer = await runCli({ cliEnv: { ...db.env, DATABASE_URL: secretUrl } }, ['backup', path.join(db.dir, 'idsvc.dump')]);
  assert.equal(answer.code, 1);
  assert.match(answer.stderr, /pg_dump --format=custom --schema=\S+ --file=".*idsvc\.dump" --dbname="\$DATABASE_URL"/);
  assert.match(answer.stderr, /pg_restore/);
  assert.equal(answer.stderr.includes('not-a-real-password'), false);
  assert.equal(fs.existsSync(path.join(db.dir, 'idsvc.dump')), false);
});
