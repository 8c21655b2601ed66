// The tests' databases are copies of one made once (test/helpers/template-db.ts): a copy must hold
// what a first start makes on an empty database (createContext: every migration, then the shipped
// catalogue), table by table, row by row, with the same schema and the same next ids.
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import SQLite from 'better-sqlite3';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { ManualClock } from '../../src/domain/clock.js';
import { PG_URL, startTestApp, TEST_DB } from '../helpers/app.js';
import { PG_TEMPLATE, pgTemplateName, preparePgSchema, TEST_START, templateDefinitions } from '../helpers/template-db.js';

/** Everything a database holds, as comparable values; the migrator's own times left out. */
type Contents = Record<string, unknown>;

const sorted = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).sort();

/**
 * The contents as text, with what differs between any two first starts made the same: the name
 * of the PostgreSQL schema, and the catalogue version's random part (a stamp other processes
 * compare; its time part stays). The site's secret is left out: the app, not the context, makes
 * it when it starts, and the first start here builds the context alone.
 */
function comparable(contents: Contents, schema?: string): string {
  const settings = contents.settings as string[] | undefined;
  const withoutSiteSecret = settings ? { ...contents, settings: settings.filter((row) => !row.includes('"site_secret"')) } : contents;
  const text = JSON.stringify(withoutSiteSecret).replace(/(catalogue_version\\",\\"value\\":\\"\d+-)[a-z0-9]+/g, '$1*');
  return schema ? text.replaceAll(schema, 'S') : text;
}

function sqliteContents(file: string): Contents {
  const db = new SQLite(file, { readonly: true });
  try {
    const schema = db.prepare(`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name`).all() as { type: string; name: string }[];
    const out: Contents = { schema, user_version: db.pragma('user_version', { simple: true }) };
    for (const { name } of schema.filter((s) => s.type === 'table')) {
      const rows = db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[];
      out[name] = name === 'kysely_migration' ? rows.map((r) => r.name) : sorted(rows);
    }
    return out;
  } finally {
    db.close();
  }
}

async function pgContents(schema: string): Promise<Contents> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    const q = async (text: string, values: unknown[] = []) => (await c.query(text, values)).rows;
    const out: Contents = {
      columns: await q(
        `SELECT table_name, column_name, data_type, character_maximum_length, numeric_precision, column_default, is_nullable, is_identity, identity_generation, collation_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY 1, 2`,
        [schema],
      ),
      indexes: await q(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 1`, [schema]),
      triggers: await q(
        `SELECT t.tgname, c.relname, t.tgenabled FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT t.tgisinternal ORDER BY 1, 2`,
        [schema],
      ),
      functions: await q(
        `SELECT p.proname, pg_get_functiondef(p.oid) AS definition FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1`,
        [schema],
      ),
      sequences: await q(
        `SELECT sequencename, data_type, start_value, increment_by, min_value, max_value, cycle, cache_size, last_value FROM pg_sequences WHERE schemaname = $1 ORDER BY 1`,
        [schema],
      ),
      tables: await q(
        `SELECT c.relname, c.relkind, c.relpersistence, c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY 1`,
        [schema],
      ),
      constraints: await q(
        `SELECT c.conrelid::regclass::text AS "table", c.conname, pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1 ORDER BY 1, 2`,
        [schema],
      ),
      triggerDefinitions: await q(
        `SELECT pg_get_triggerdef(t.oid) AS definition FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT t.tgisinternal ORDER BY 1`,
        [schema],
      ),
    };
    const tables = await q(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY 1`, [schema]);
    for (const { table_name: name } of tables as { table_name: string }[]) {
      const rows = await q(`SELECT * FROM "${schema}"."${name}"`);
      out[name] = name === 'kysely_migration' ? rows.map((r) => r.name).sort() : sorted(rows);
    }
    return out;
  } finally {
    await c.end();
  }
}

/** Whether an installed pg_dump is of the server's major version (whose definitions the server surely runs); null when none is installed. */
async function pgDumpMatchesServer(): Promise<boolean | null> {
  const version = spawnSync('pg_dump', ['--version'], { encoding: 'utf8' });
  const major = /\(PostgreSQL\) (\d+)/.exec(version.stdout ?? '')?.[1];
  if (version.status !== 0 || major === undefined) return null;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    const { rows } = await c.query<{ v: string }>('SHOW server_version_num');
    return Math.floor(Number(rows[0]!.v) / 10000) === Number(major);
  } finally {
    await c.end();
  }
}

test(`a test's database holds what a first start makes on an empty one (${TEST_DB})`, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-first-start-'));
  const schema = `first_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const migrated = `${schema}_migrated`;
  const url = TEST_DB === 'postgres' ? PG_URL : `sqlite:${path.join(dir, 'first.sqlite')}`;
  const first = await createContext(loadConfig({ DATABASE_URL: url, BACKGROUND_JOBS: '0', MAIL_DIR: path.join(dir, 'mail') }), {
    clock: new ManualClock(TEST_START),
    catalogueCheckMs: 0,
    popularityRefreshMs: 0,
    ...(TEST_DB === 'postgres' ? { pgSchema: schema } : {}),
  });
  await first.close();
  const t = await startTestApp();
  try {
    if (TEST_DB === 'postgres') {
      const [made, copied] = [await pgContents(schema), await pgContents(t.ctx.db.pgSchema!)];
      assert.ok((made.services as unknown[]).length > 100, 'the shipped catalogue is loaded');
      assert.equal(comparable(copied, t.ctx.db.pgSchema!), comparable(made, schema));
      if (PG_TEMPLATE) {
        // The suite's schemas come from the template's definitions wherever pg_dump can make them,
        // and the other way, the migrations then the rows, makes the same.
        const template = pgTemplateName(process.env.IDSVC_TEST_TEMPLATE_DIR!);
        if ((await pgDumpMatchesServer()) === true) assert.notEqual(templateDefinitions(template), null, 'made from the definitions');
        await preparePgSchema(PG_URL, migrated, { byMigrations: true });
        assert.equal(comparable(await pgContents(migrated), migrated), comparable(made, schema));
      }
    } else {
      const made = sqliteContents(path.join(dir, 'first.sqlite'));
      const copied = sqliteContents(t.config.databaseUrl.slice('sqlite:'.length));
      assert.ok((made.services as unknown[]).length > 100, 'the shipped catalogue is loaded');
      assert.equal(comparable(copied), comparable(made));
    }
  } finally {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
    if (TEST_DB === 'postgres') {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.query(`DROP SCHEMA IF EXISTS ${migrated} CASCADE`);
      await c.end();
    }
  }
});
