// A test's database as a first start leaves it (every migration run, the shipped catalogue loaded),
// made once and copied for each test instead of made again each time. scripts/test.sh names a
// directory shared by the suite's files (IDSVC_TEST_TEMPLATE_DIR) and removes it, with the
// PostgreSQL template schema, when the suite ends. A file run without it makes its own SQLite
// template and, on PostgreSQL, none. Every test still opens its copy through createContext, whose
// migrator finds nothing left to run and whose catalogue check finds the catalogue loaded: the
// state is the one those two would have made. Migrations and first starts keep their own tests
// (spawned servers on databases of their own, test/db/).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate, openDatabase } from '../../src/db/database.js';
import { loadCatalogueFile } from '../../src/catalogue/catalogue-file.js';
import { upsertServices } from '../../src/repositories/catalogue.js';

/** The test clock's start (test/helpers/app.ts): the catalogue's rows carry it as a first start would. */
export const TEST_START = Date.UTC(2026, 0, 1);

let ownDir: string | null = null;

function templateDir(): string {
  const shared = process.env.IDSVC_TEST_TEMPLATE_DIR;
  if (shared) return shared;
  if (ownDir === null) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-template-'));
    ownDir = dir;
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  return ownDir;
}

let sqliteTemplate: Promise<string> | null = null;

/** Fills `file` (which must not exist) with a copy of the migrated, catalogued SQLite template. */
export async function copySqliteTemplate(file: string): Promise<void> {
  sqliteTemplate ??= buildSqliteTemplate();
  // COPYFILE_EXCL: a test's own file is never overwritten.
  fs.copyFileSync(await sqliteTemplate, file, fs.constants.COPYFILE_EXCL);
}

async function buildSqliteTemplate(): Promise<string> {
  const file = path.join(templateDir(), 'template.sqlite');
  if (fs.existsSync(file)) return file;
  // Built under a name of this process's and renamed into place: files starting together may each
  // build one, and none ever copies one half written.
  const building = `${file}.${process.pid}`;
  const db = await openDatabase(`sqlite:${building}`);
  try {
    await migrate(db);
    await db.write((w) => upsertServices(w, loadCatalogueFile(), TEST_START));
  } finally {
    await db.close();
  }
  // Closing the last connection checkpoints the WAL into the file and removes it: the file alone is
  // the whole database, which a copy of it must be.
  if (fs.existsSync(`${building}-wal`)) throw new Error(`the SQLite template kept a WAL file: ${building}-wal`);
  fs.renameSync(building, file);
  return file;
}

let pgTemplate: Promise<string | null> | null = null;

/** Whether preparePgSchema may be used: only within a suite (scripts/test.sh), which drops the template at its end. */
export const PG_TEMPLATE = process.env.IDSVC_TEST_TEMPLATE_DIR !== undefined;

/**
 * Makes `schema` what a first start leaves: its tables, functions and triggers, and the rows a
 * first start writes (the catalogue, and whatever the migrations and the catalogue's triggers add),
 * copied from the suite's template schema instead of loaded row by row. The structure comes from
 * the template's own definitions (pg_dump, once per suite) run again under the schema's name, one
 * statement list in one transaction: the migrations that made it, run one by one through the
 * migrator, cost the database more and were most of the test process's set-up. Where there are
 * no such definitions (pg_dump not installed, or what it wrote does not run on this server), or
 * `byMigrations` asks, the migrations make it, as on a first start. test/db/test-template.test.ts
 * holds the result of each way equal to a first start's.
 */
export async function preparePgSchema(url: string, schema: string, { byMigrations = false } = {}): Promise<void> {
  pgTemplate ??= buildPgTemplate(url);
  const template = await pgTemplate;
  if (template === null) return;
  const definitions = byMigrations ? null : templateDefinitions(template);
  if (definitions === null) {
    const db = await openDatabase(url, { pgSchema: schema, timeoutMs: 0 });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await copyRows(c, template, schema, definitions === null ? [] : [renamed(definitions, template, schema)]);
  } finally {
    await c.end();
  }
}

/** Definitions naming `from` as naming `to` (names of the template's own making: nothing else holds them). */
const renamed = (definitions: string, from: string, to: string) => definitions.replaceAll(from, () => to);

let definitionsOf: { template: string; sql: string | null } | undefined;

/**
 * The template schema's definitions as SQL naming it, from the file written once for the suite
 * (by the first process to build or find the template, under its lock), or null when there are
 * none to use (preparePgSchema then runs the migrations).
 */
export function templateDefinitions(template: string): string | null {
  if (definitionsOf?.template === template) return definitionsOf.sql;
  const file = path.join(templateDir(), `${template}.sql`);
  const sql = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  definitionsOf = { template, sql: sql === '' ? null : sql };
  return definitionsOf.sql;
}

/**
 * pg_dump's definitions of `template`, as one statement list to run again under another name, once
 * tried: made under a scratch name in a transaction rolled back. '' (with the reason on stderr,
 * once for the suite) when pg_dump is missing or fails, or its output does not run on this server:
 * a pg_dump of another major version than the server's may write what the server does not know.
 */
async function usableDefinitions(c: pg.Client, url: string, template: string): Promise<string> {
  let dump: string;
  try {
    dump = execFileSync('pg_dump', ['--schema-only', '--no-owner', '--no-privileges', '--schema', template, url], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
      timeout: 120_000,
    });
  } catch (err) {
    // Not the error's message: it repeats the command, the database URL and any password in it.
    const { code, stderr } = err as { code?: string; stderr?: string };
    return fallBack(
      code === 'ENOENT'
        ? 'pg_dump is not installed'
        : `pg_dump failed (${
            String(stderr ?? code ?? '')
              .trim()
              .split('\n')[0]
          })`,
    );
  }
  // psql's own commands (\restrict, \unrestrict: a guard for psql) are no SQL.
  const definitions = dump
    .split('\n')
    .filter((line) => !/^\\(un)?restrict /.test(line))
    .join('\n');
  try {
    await c.query(`BEGIN; ${renamed(definitions, template, `${template}_try`)}`);
  } catch (err) {
    return fallBack(`the template's definitions from pg_dump do not run on this server: ${(err as Error).message}`);
  } finally {
    await c.query('ROLLBACK');
  }
  return definitions;
}

function fallBack(reason: string): string {
  process.stderr.write(`test/helpers/template-db.ts: ${reason}; each PostgreSQL test schema runs the migrations instead\n`);
  return '';
}

/** The suite's PostgreSQL template schema, named after its template directory (scripts/test.sh drops it by that name). */
export function pgTemplateName(dir: string): string {
  return `idsvc_template_${path
    .basename(dir)
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()
    .slice(-16)}`;
}

/** Tables the migrator keeps for itself: a target the migrations made has its own, from their run. */
const MIGRATOR_TABLES = ['kysely_migration', 'kysely_migration_lock'];

/**
 * Copies the template's rows into `to`, after the statements `made` (which make its structure, when
 * the migrator did not: its own tables are then copied too, as the migrations' record).
 */
async function copyRows(c: pg.Client, from: string, to: string, made: string[]): Promise<void> {
  const { rows: tables } = await c.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND NOT (table_name = ANY($2)) ORDER BY table_name`,
    [from, made.length > 0 ? [] : MIGRATOR_TABLES],
  );
  const { rows: sequences } = await c.query<{ name: string; value: string; called: boolean }>(
    `SELECT sequencename AS name, COALESCE(last_value, start_value)::text AS value, last_value IS NOT NULL AS called FROM pg_sequences WHERE schemaname = $1`,
    [from],
  );
  const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const statements = [
    'BEGIN',
    ...made,
    // pg_dump's definitions empty the search path for the session: every name below is qualified.
    // The rows are copied as they are: the triggers that made some of them from others must not
    // run again, nor foreign keys be checked table by table.
    'SET LOCAL session_replication_role = replica',
    ...tables.flatMap(({ name }) => [
      `DELETE FROM ${q(to)}.${q(name)}`,
      `INSERT INTO ${q(to)}.${q(name)} OVERRIDING SYSTEM VALUE SELECT * FROM ${q(from)}.${q(name)}`,
    ]),
    ...sequences.map(({ name, value, called }) => `SELECT setval('${q(to)}.${q(name)}', ${Number(value)}, ${called})`),
    'COMMIT',
  ];
  await c.query(statements.join(';\n'));
}

/** The template's name, or null when the rows cannot be copied as they are (see copyRows): createContext then loads them. */
async function buildPgTemplate(url: string): Promise<string | null> {
  const name = pgTemplateName(templateDir());
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    // Turning the triggers off while copying (session_replication_role) takes a superuser.
    const { rows } = await c.query<{ rolsuper: boolean }>('SELECT rolsuper FROM pg_roles WHERE rolname = current_user');
    if (!rows[0]?.rolsuper) return null;
    // One builder at a time across the suite's files: the others wait, then find it built.
    await c.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    const { rowCount } = await c.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [name]);
    if (!rowCount) {
      // Built under another name and renamed when whole: a builder that died half way leaves
      // nothing the others would take for the template.
      const building = `${name}_b`;
      await c.query(`DROP SCHEMA IF EXISTS ${building} CASCADE`);
      const db = await openDatabase(url, { pgSchema: building, timeoutMs: 0 });
      try {
        await migrate(db);
        await db.write((w) => upsertServices(w, loadCatalogueFile(), TEST_START));
      } finally {
        await db.close();
      }
      await c.query(`ALTER SCHEMA ${building} RENAME TO ${name}`);
    }
    const file = path.join(templateDir(), `${name}.sql`);
    if (!fs.existsSync(file)) {
      // Written under another name and renamed when whole, as the SQLite template is.
      fs.writeFileSync(`${file}.${process.pid}`, await usableDefinitions(c, url, name));
      fs.renameSync(`${file}.${process.pid}`, file);
    }
  } finally {
    await c.end(); // which releases the lock
  }
  return name;
}

/** Drops the suite's PostgreSQL template (scripts/drop-test-template.ts, when scripts/test.sh ends). */
export async function dropPgTemplate(url: string, dir: string): Promise<void> {
  const name = pgTemplateName(dir);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    await c.query(`DROP SCHEMA IF EXISTS ${name}_b CASCADE`);
  } finally {
    await c.end();
  }
}
