// kill -9 of the real server process while it is taking concurrent writes (issue 20): after a
// restart every acknowledged write is there, and on SQLite the database file is sound
// (`PRAGMA integrity_check`). An acknowledgement must mean "committed and durable", whatever
// happens to the process a microsecond later.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import SQLite from 'better-sqlite3';
import { IdsvcClient, IdsvcError } from '@idsvc/client';
import { projectRoot } from '../../src/paths.js';
import { PG_URL, TEST_DB } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { idsvcArgv } from '../helpers/idsvc-command.js';

const WRITERS = 32;
const WRITING_MS = 1500;

const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-kill9-'));
const schema = `kill9_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const dbEnv: Record<string, string> =
  TEST_DB === 'postgres' ? { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema } : { DATABASE_URL: `sqlite:${path.join(tmpDir, 'kill9.sqlite')}` };
const running = new Set<ChildProcessWithoutNullStreams>();

after(async () => {
  for (const child of running) child.kill('SIGKILL');
  fs.rmSync(tmpDir, { recursive: true, force: true });
  if (TEST_DB === 'postgres') {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  }
});

/** `idsvc serve` as its own process; resolves with its address and what it printed. */
async function serve(): Promise<{ child: ChildProcessWithoutNullStreams; url: string; output: string }> {
  const child = spawn(process.execPath, idsvcArgv(['serve']), {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...dbEnv,
      PORT: '0',
      HOST: '127.0.0.1',
      BACKGROUND_JOBS: '0',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_KEY: '100000000',
    },
    cwd: projectRoot,
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  let output = '';
  let errors = '';
  child.stderr.on('data', (d: Buffer) => (errors += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${errors}`)), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      const m = /idsvc listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`the server exited (${code}): ${errors}`)));
  });
  return { child, url, output };
}

test(`kill -9 during ${WRITERS} concurrent writes loses no acknowledged write (${TEST_DB})`, async (t) => {
  const created = await runCli({ cliEnv: dbEnv }, ['partner', 'create', '--name', 'kill -9', '--json']);
  assert.equal(created.code, 0, created.stderr);
  const { api_key: apiKey, api_token: apiToken } = JSON.parse(created.stdout) as { api_key: string; api_token: string };
  const first = await serve();
  const client = new IdsvcClient({ baseUrl: first.url, apiKey, apiToken });

  // A fresh process answers its first calls slowly (code compiled on first use): warm it up, so
  // the kill lands on a server writing at full speed.
  for (let round = 0; round < 3; round++) await Promise.all(Array.from({ length: WRITERS }, (_, w) => client.updateService(`warm${w}`, 'github', `r${round}`)));

  // Each writer pushes to users of its own, one after another, until the process dies under it.
  const acked: { user: string; value: string }[] = [];
  let killed = false;
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    for (let n = 0; !killed; n++) {
      const user = `k${w}_${n}`;
      try {
        await client.updateService(user, 'github', `v${w}_${n}`);
        if (!killed) acked.push({ user, value: `v${w}_${n}` });
      } catch (e) {
        if (killed) return; // the connection died with the process: not acknowledged
        throw e instanceof IdsvcError ? new Error(`a write failed before the kill: ${e.code}`) : e;
      }
    }
  });
  await sleep(WRITING_MS);
  // Whatever is acknowledged from here on was not seen before the kill: count only what came before.
  killed = true;
  first.child.kill('SIGKILL');
  const [, signal] = (await once(first.child, 'exit')) as [number | null, string | null];
  assert.equal(signal, 'SIGKILL');
  await Promise.allSettled(writers);
  assert.ok(acked.length >= WRITERS, `writes were acknowledged before the kill (${acked.length})`);
  t.diagnostic(`${acked.length} writes acknowledged before the kill`);

  if (TEST_DB === 'sqlite') {
    const file = dbEnv.DATABASE_URL!.slice('sqlite:'.length);
    const db = new SQLite(file);
    try {
      assert.deepEqual(db.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    } finally {
      db.close();
    }
  }

  const second = await serve();
  try {
    const after = new IdsvcClient({ baseUrl: second.url, apiKey, apiToken });
    const missing: string[] = [];
    for (let i = 0; i < acked.length; i += WRITERS) {
      await Promise.all(
        acked.slice(i, i + WRITERS).map(async ({ user, value }) => {
          const services = await after.returnServices(user).catch(() => []);
          if (services.find((s) => s.svcId === 'github')?.usrSvcId !== value) missing.push(user);
        }),
      );
    }
    assert.deepEqual(missing, [], `all ${acked.length} acknowledged writes are present after the restart`);
  } finally {
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');
  }
});
