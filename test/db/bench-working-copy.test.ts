// The benchmark's working copies (bench/dataset.ts, workingCopy) are made from the dataset's own
// database, whatever it is named: a dataset an older revision built is registered under a name of
// its own (bench/ab-dataset.sh), and its copies must come from it, not from this size's usual one.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import Sqlite from 'better-sqlite3';
import { DATA_DIR, PG_ADMIN_URL, workingCopy, type Dataset } from '../../bench/dataset.js';
import { TEST_DB } from '../helpers/app.js';

const id = `${process.pid}`;
const tag = `t${id}`;
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A dataset of three users whose database holds one marked row, under a name of its own. */
async function datasetElsewhere(): Promise<Dataset> {
  const base = { users: 3, schema: null, version: 2, apiKey: '', apiToken: '', partners: [], idsFile: '', servicesFile: '', services: [] };
  if (TEST_DB === 'postgres') {
    const database = `idsvc_bench_3_old${id}`;
    await admin((c) => c.query(`CREATE DATABASE ${database}`));
    cleanups.push(() => admin((c) => c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)).then(() => undefined));
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${database}`;
    const c = new pg.Client({ connectionString: url.toString() });
    await c.connect();
    await c.query("CREATE TABLE marker (what text); INSERT INTO marker VALUES ('built by the older revision')");
    await c.end();
    return { ...base, backend: 'postgres', databaseUrl: url.toString() };
  }
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const file = path.join(DATA_DIR, `sqlite-3-old${id}.sqlite`);
  const db = new Sqlite(file);
  db.exec("CREATE TABLE marker (what text); INSERT INTO marker VALUES ('built by the older revision')");
  db.close();
  cleanups.push(() => fs.rmSync(file, { force: true }));
  return { ...base, backend: 'sqlite', databaseUrl: `sqlite:${file}` };
}

async function markerIn(ds: Dataset): Promise<string> {
  if (ds.backend === 'postgres') {
    const c = new pg.Client({ connectionString: ds.databaseUrl });
    await c.connect();
    try {
      return (await c.query<{ what: string }>('SELECT what FROM marker')).rows[0]!.what;
    } finally {
      await c.end();
    }
  }
  const db = new Sqlite(ds.databaseUrl.slice('sqlite:'.length), { readonly: true });
  try {
    return (db.prepare('SELECT what FROM marker').get() as { what: string }).what;
  } finally {
    db.close();
  }
}

test(`a working copy is made from the dataset's own database, whatever its name (${TEST_DB})`, async () => {
  const ds = await datasetElsewhere();
  const copy = await workingCopy(ds, tag);
  if (copy.backend === 'postgres') {
    const name = new URL(copy.databaseUrl).pathname.slice(1);
    cleanups.push(() => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined));
  } else {
    cleanups.push(() => fs.rmSync(copy.databaseUrl.slice('sqlite:'.length), { force: true }));
  }
  assert.notEqual(copy.databaseUrl, ds.databaseUrl, 'a copy, not the dataset itself');
  assert.equal(await markerIn(copy), 'built by the older revision');
});
