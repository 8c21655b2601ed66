// The benchmark's dataset: N opted-in users with 8 central identities each, one subject per user,
// the bench partner's repository (two pushes for every 4th user, a link for every 10th) and four
// more partners, each linked to another tenth of the users, for the mixed scenario's traffic. The
// schema comes from the storage layer (createContext migrates and loads the catalogue); the rows go
// in with the raw driver in bulk, because one ORM insert per row would take hours at 1 M users.
// A dataset is reused when its meta file says it was completed. It is never written to after that:
// every run works on a fresh copy (workingCopy), because update_service adds rows, and a dataset
// that grew with each run would make runs incomparable (more pushes per user make every private
// view more work).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import Sqlite from 'better-sqlite3';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { createPartner } from '../src/repositories/partners.js';
import { COUNT_POPULARITY } from '../src/db/migrations/005-service-popularity.js';

export type Backend = 'sqlite' | 'postgres';

export interface Dataset {
  backend: Backend;
  users: number;
  databaseUrl: string;
  /** PostgreSQL schema of the dataset (DATABASE_SCHEMA), null on SQLite. */
  schema: string | null;
  /** Layout of the rows; a dataset of another version is rebuilt. */
  version: number;
  /** The bench partner: the single-operation scenarios all use it. */
  apiKey: string;
  apiToken: string;
  /** Every partner, the bench partner first: the mixed scenario spreads its calls over them. */
  partners: PartnerKeys[];
  /** One MD5 per user, 33 bytes a line (user i on line i-1): the load generator's random pick. */
  idsFile: string;
  /** Enabled service ids, one a line. */
  servicesFile: string;
  services: string[];
}

export interface PartnerKeys {
  apiKey: string;
  apiToken: string;
}

export const DATA_DIR = path.join(import.meta.dirname, 'data');
/** 2: four more partners, linked to users i % 10 = 1…4. */
const DATASET_VERSION = 3;
const EXTRA_PARTNERS = 4;
export const IDENTITIES_PER_USER = 8;
export const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/test';
const PG_DB = 'idsvc_bench';
/** A bulk load's statements insert a quarter of a million users each: far past a server's DATABASE_TIMEOUT_MS. */
const BULK_TIMEOUT_MS = '600000';

export const emailOf = (i: number) => `bench${i}@example.com`;
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
/** The j-th central service of user i: distinct for j < 8 whenever there are more than 8·37 services. */
export const centralSvc = (i: number, j: number, n: number) => (i * 7 + j * 37) % n;
const pushedSvc = (i: number, k: number, n: number) => (i * 11 + 5 + k * 53) % n;

function log(msg: string): void {
  process.stderr.write(`[dataset] ${msg}\n`);
}

// One database per dataset size: Kysely's migrator looks for its own tables in every schema of a
// database, so two datasets in two schemas of one database would confuse it.
function pgUrl(users: number): { url: string; database: string } {
  const u = new URL(PG_ADMIN_URL);
  const database = `${PG_DB}_${users}`;
  u.pathname = `/${database}`;
  return { url: u.toString(), database };
}

export async function ensureDataset(backend: Backend, users: number): Promise<Dataset> {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const name = `${backend}-${users}`;
  const metaFile = path.join(DATA_DIR, `${name}.meta.json`);
  const idsFile = path.join(DATA_DIR, `ids-${users}.txt`);
  const servicesFile = path.join(DATA_DIR, `services-${name}.txt`);
  if (fs.existsSync(metaFile) && fs.existsSync(idsFile)) {
    const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8')) as Dataset;
    if (meta.users === users && meta.version === DATASET_VERSION) {
      log(`reusing ${name}`);
      // Migrations added since it was built run on the dataset itself (createContext migrates;
      // a no-op once the dataset is up to date), so its working copies need none.
      await (
        await createContext(loadConfig({ DATABASE_URL: meta.databaseUrl, LOG_LEVEL: 'warn', BACKGROUND_JOBS: '0', DATABASE_TIMEOUT_MS: BULK_TIMEOUT_MS }))
      ).close();
      return meta;
    }
  }
  const started = Date.now();
  let databaseUrl: string;
  if (backend === 'sqlite') {
    const file = path.join(DATA_DIR, `${name}.sqlite`);
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    databaseUrl = `sqlite:${file}`;
  } else {
    const { url, database } = pgUrl(users);
    databaseUrl = url;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${database}`);
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
  }

  // The storage layer creates the schema and loads the shipped catalogue, as on a first start.
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', BACKGROUND_JOBS: '0', DATABASE_TIMEOUT_MS: BULK_TIMEOUT_MS });
  const ctx = await createContext(config);
  const now = Date.now();
  const partners: PartnerKeys[] = [];
  const partnerIds: number[] = [];
  for (let p = 0; p <= EXTRA_PARTNERS; p++) {
    const keys = await ctx.db.write((w) => createPartner(w, { name: p === 0 ? 'Bench partner' : `Bench partner ${p + 1}` }, now));
    partners.push({ apiKey: keys.apiKey, apiToken: keys.apiToken });
    partnerIds.push((await ctx.db.kysely.selectFrom('partners').select('id').where('api_key', '=', keys.apiKey).executeTakeFirstOrThrow()).id);
  }
  const services = (await ctx.db.kysely.selectFrom('services').select('svc_id').where('disabled', '=', 0).orderBy('svc_id').execute()).map((r) => r.svc_id);
  if (services.length <= IDENTITIES_PER_USER * 37) throw new Error('the catalogue is too small for the dataset generator');

  if (ctx.db.sqlite) fillSqlite(ctx.db.sqlite, users, services, partnerIds, now);
  else await fillPostgres(ctx.db.pgPool as pg.Pool, users, services, partnerIds, now);
  await ctx.close();

  if (!fs.existsSync(idsFile)) writeIdsFile(idsFile, users);
  fs.writeFileSync(servicesFile, `${services.join('\n')}\n`);
  const { apiKey, apiToken } = partners[0]!;
  const meta: Dataset = { backend, users, version: DATASET_VERSION, databaseUrl, schema: null, apiKey, apiToken, partners, idsFile, servicesFile, services };
  fs.writeFileSync(metaFile, JSON.stringify(meta, null, 2));
  log(`built ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return meta;
}

function writeIdsFile(file: string, users: number): void {
  const fd = fs.openSync(file, 'w');
  const chunk: string[] = [];
  for (let i = 1; i <= users; i++) {
    chunk.push(md5(emailOf(i)));
    if (chunk.length === 100_000 || i === users) {
      fs.writeSync(fd, `${chunk.join('\n')}\n`);
      chunk.length = 0;
    }
  }
  fs.closeSync(fd);
}

type SqliteDb = import('better-sqlite3').Database;

/** The bench partner (partnerIds[0]) pushes and links as the header says; partner p > 0 links users with i % 10 = p. */
function fillSqlite(db: SqliteDb, users: number, services: string[], partnerIds: number[], now: number): void {
  const partnerId = partnerIds[0]!;
  // Loading only: nothing is acknowledged to anyone until the meta file is written at the end.
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -1048576');
  const insUser = db.prepare(
    `INSERT INTO users (id, user_id, email, email_md5, email_sha256, password_hash, opted_in, consented, email_proven_at, discoverable, pro, public_fields, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'bench-no-login', 1, 1, ?, 1, 0, '[]', ?, ?)`,
  );
  const insSubject = db.prepare('INSERT INTO subjects (id, user_ref, created_at) VALUES (?, ?, ?)');
  const insCentral = db.prepare(
    `INSERT INTO central_identities (user_ref, svc_id, usr_svc_id, usr_svc_id_norm, verified, verified_by, verified_at, last_checked_at, source_partner_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
  );
  const insPushed = db.prepare('INSERT INTO partner_identities (partner_id, subject_id, svc_id, usr_svc_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
  const insLink = db.prepare('INSERT INTO links (partner_id, subject_id, user_ref, user_identifier, created_at) VALUES (?, ?, ?, ?, ?)');
  // A bulk load, so the popularity counters (migration 005) are counted once at the end instead of
  // by their triggers on each of 8 M rows: the triggers are set aside and put back as they were.
  const triggers = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'popularity_%'").all() as {
    name: string;
    sql: string;
  }[];
  for (const t of triggers) db.exec(`DROP TRIGGER ${t.name}`);
  const n = services.length;
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i <= to; i++) {
      const email = emailOf(i);
      const m = md5(email);
      insUser.run(i, `bu${i}`, email, m, sha256(email), now, now, now);
      insSubject.run(i, i, now);
      for (let j = 0; j < IDENTITIES_PER_USER; j++) {
        const handle = `bench${i}_${j}`;
        const verified = j === 0 ? 1 : 0;
        insCentral.run(i, services[centralSvc(i, j, n)], handle, handle, verified, verified ? 'relme' : null, verified ? now : null, now, now, now);
      }
      if (i % 4 === 0) for (let k = 0; k < 2; k++) insPushed.run(partnerId, i, services[pushedSvc(i, k, n)], `pushed${i}_${k}`, now - 1000, now - 1000);
      if (i % 10 === 0) insLink.run(partnerId, i, i, m, now);
      else if (i % 10 < partnerIds.length) insLink.run(partnerIds[i % 10], i, i, m, now);
    }
  });
  const step = 50_000;
  for (let from = 1; from <= users; from += step) {
    batch(from, Math.min(users, from + step - 1));
    if ((from - 1) % 200_000 === 0) log(`sqlite: ${Math.min(users, from + step - 1)} / ${users} users`);
  }
  db.transaction(() => {
    db.exec(`DELETE FROM service_popularity; INSERT INTO service_popularity (svc_id, user_count) ${COUNT_POPULARITY}`);
    for (const t of triggers) db.exec(t.sql);
  })();
  // No ANALYZE: the service's own databases have no statistics unless an operator gathers them,
  // and it drops the stat4 samples an ANALYZE takes (src/db/database.ts), which would make every
  // lookup, the work ceiling's too, prepare its statement again on each call.
  db.pragma('wal_checkpoint(TRUNCATE)');
}

async function fillPostgres(pool: pg.Pool, users: number, services: string[], partnerIds: number[], now: number): Promise<void> {
  const partnerId = partnerIds[0]!;
  const c = await pool.connect();
  try {
    // Generated inside the server: the same rows as the SQLite generator, without shipping 10 M
    // rows over the socket.
    await c.query('SET synchronous_commit = off');
    await c.query(`SET maintenance_work_mem = '512MB'`);
    // The change feed's triggers would add a row to answer_changes per row loaded, and prune one:
    // millions in one transaction, each prune walking the dead rows of the ones before (a million
    // users took over an hour). The servers start with empty caches and read the feed from its
    // end, so the load needs none of them: the session sets aside every ordinary trigger (superuser).
    await c.query('SET session_replication_role = replica');
    const svcArray = `ARRAY[${services.map((s) => `'${s.replace(/'/g, "''")}'`).join(',')}]::text[]`;
    // A bulk load: the popularity counters are counted once at the end (see fillSqlite).
    await c.query('ALTER TABLE central_identities DISABLE TRIGGER popularity_entry');
    const n = services.length;
    const step = 250_000;
    for (let from = 1; from <= users; from += step) {
      const to = Math.min(users, from + step - 1);
      await c.query('BEGIN');
      await c.query(
        `INSERT INTO users (id, user_id, email, email_md5, email_sha256, password_hash, opted_in, consented, email_proven_at, discoverable, pro, public_fields, created_at, updated_at)
         SELECT i, 'bu' || i, e, md5(e), encode(sha256(convert_to(e, 'UTF8')), 'hex'), 'bench-no-login', 1, 1, $3, 1, 0, '[]', $3, $3
         FROM generate_series($1::bigint, $2::bigint) i, LATERAL (SELECT 'bench' || i || '@example.com' AS e) x`,
        [from, to, now],
      );
      await c.query('INSERT INTO subjects (id, user_ref, created_at) SELECT i, i, $3 FROM generate_series($1::bigint, $2::bigint) i', [from, to, now]);
      await c.query(
        `INSERT INTO central_identities (user_ref, svc_id, usr_svc_id, usr_svc_id_norm, verified, verified_by, verified_at, last_checked_at, source_partner_id, created_at, updated_at)
         SELECT i, (${svcArray})[((i * 7 + j * 37) % ${n}) + 1], 'bench' || i || '_' || j, 'bench' || i || '_' || j,
                (j = 0)::int, CASE WHEN j = 0 THEN 'relme' END, CASE WHEN j = 0 THEN $3::bigint END, $3, NULL, $3, $3
         FROM generate_series($1::bigint, $2::bigint) i, generate_series(0, ${IDENTITIES_PER_USER - 1}) j ORDER BY i, j`,
        [from, to, now],
      );
      await c.query(
        `INSERT INTO partner_identities (partner_id, subject_id, svc_id, usr_svc_id, created_at, updated_at)
         SELECT $4, i, (${svcArray})[((i * 11 + 5 + k * 53) % ${n}) + 1], 'pushed' || i || '_' || k, $3::bigint - 1000, $3::bigint - 1000
         FROM generate_series($1::bigint, $2::bigint) i, generate_series(0, 1) k WHERE i % 4 = 0`,
        [from, to, now, partnerId],
      );
      await c.query(
        `INSERT INTO links (partner_id, subject_id, user_ref, user_identifier, created_at)
         SELECT $4, i, i, md5('bench' || i || '@example.com'), $3 FROM generate_series($1::bigint, $2::bigint) i WHERE i % 10 = 0`,
        [from, to, now, partnerId],
      );
      for (const [p, id] of partnerIds.entries()) {
        if (p === 0) continue;
        await c.query(
          `INSERT INTO links (partner_id, subject_id, user_ref, user_identifier, created_at)
           SELECT $4, i, i, md5('bench' || i || '@example.com'), $3 FROM generate_series($1::bigint, $2::bigint) i WHERE i % 10 = $5`,
          [from, to, now, id, p],
        );
      }
      await c.query('COMMIT');
      log(`postgres: ${to} / ${users} users`);
    }
    await c.query('BEGIN');
    await c.query(`DELETE FROM service_popularity; INSERT INTO service_popularity (svc_id, user_count) ${COUNT_POPULARITY}`);
    await c.query('ALTER TABLE central_identities ENABLE TRIGGER popularity_entry');
    await c.query('COMMIT');
    // Explicit ids were given, so the sequences must move past them.
    for (const t of ['users', 'subjects']) await c.query(`SELECT setval(pg_get_serial_sequence('${t}', 'id'), (SELECT max(id) FROM ${t}))`);
    await c.query('VACUUM ANALYZE');
  } finally {
    c.release();
  }
}

/**
 * The PostgreSQL database a dataset lives in: its own, named in its URL, which need not be this
 * size's usual one (bench/ab-dataset.sh registers one an older revision built under a name of its own).
 */
export function datasetDatabase(ds: Pick<Dataset, 'databaseUrl'>): string {
  const database = decodeURIComponent(new URL(ds.databaseUrl).pathname.slice(1));
  if (!/^[a-z0-9_]{1,40}$/.test(database)) throw new Error(`bad dataset database name: ${database}`);
  return database;
}

/**
 * A fresh copy of the dataset for one run to write to (`tag` names it: one copy per concurrent
 * user), on disk before it is used. SQLite: a backup (page by page); PostgreSQL: CREATE DATABASE …
 * TEMPLATE … STRATEGY = WAL_LOG (PostgreSQL 15 or later), then CHECKPOINT.
 */
export async function workingCopy(ds: Dataset, tag: string): Promise<Dataset> {
  if (!/^[a-z0-9_]{1,20}$/.test(tag)) throw new Error(`bad working-copy tag: ${tag}`);
  if (ds.backend === 'sqlite') {
    const source = ds.databaseUrl.slice('sqlite:'.length);
    const file = path.join(DATA_DIR, `${ds.backend}-${ds.users}.${tag}.sqlite`);
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    // SQLite's backup API, not a file copy: it writes page by page, as SQLite itself does. A
    // copy_file_range copy leaves the file in the page cache as large folios, and every later 4 KB
    // write then dirties and writes back a whole folio, several times what the write itself needs,
    // which would measure the copy rather than the service. It also reads a
    // consistent snapshot, WAL included.
    const src = new Sqlite(source, { readonly: true });
    try {
      await src.backup(file);
    } finally {
      src.close();
    }
    // On disk before the run starts: else the first checkpoint's fsync would write the whole copy
    // back in the middle of update_service.
    const fd = fs.openSync(file, 'r+');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    return { ...ds, databaseUrl: `sqlite:${file}` };
  }
  const database = datasetDatabase(ds);
  const copy = `${database}_${tag}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`);
    // WAL_LOG copies block by block through shared buffers (a bulk file copy would leave large
    // page-cache folios, as on SQLite above); CHECKPOINT then puts the copy on disk before the run.
    await admin.query(`CREATE DATABASE ${copy} TEMPLATE ${database} STRATEGY = WAL_LOG`);
    await admin.query('CHECKPOINT');
  } finally {
    await admin.end();
  }
  const u = new URL(ds.databaseUrl);
  u.pathname = `/${copy}`;
  return { ...ds, databaseUrl: u.toString() };
}

// `node --import tsx bench/dataset.ts copy NAME TAG` prints the working copy's database URL (bench/ab.sh).
if (process.argv[1] === import.meta.filename && process.argv[2] === 'copy') {
  const [, , , name, tag] = process.argv;
  const meta = JSON.parse(fs.readFileSync(path.join(DATA_DIR, `${name}.meta.json`), 'utf8')) as Dataset;
  process.stdout.write(`${(await workingCopy(meta, tag ?? 'ab')).databaseUrl}\n`);
}
