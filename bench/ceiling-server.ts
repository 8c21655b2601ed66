// The two reference servers the service is measured against, on plain node:http with no framework.
//
// - bytes: answers every request with the very bytes (status, headers, body) the service sent for a
//   sample request of the same scenario. What the machine, Node and the socket cost; nothing else.
// - work:  the least work each answer needs: the raw driver (better-sqlite3 or pg), indexed queries
//   by the hashed identifier, the catalogue in memory, a string-template XML. The service's ratio
//   to it is what routing, validation, authentication, rate limiting and the visibility rules cost.
//   No api_key or api_token check (the api_key only names the partner), no rate limit, no error
//   shapes beyond 404. The widget's script (mixed scenario) is the same lookups as the partner's
//   private view (signed) or the public view, sent as one JSON literal in a line of JavaScript.
//
// Started by bench/run.ts as `node --import tsx bench/ceiling-server.ts` with its settings as JSON
// in the file named by BENCH_CEILING_FILE; it prints "ready" when listening.
import fs from 'node:fs';
import http from 'node:http';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { buildProfileUrl } from '../src/catalogue/profile-url.js';
import type { CatalogueEntry } from '../src/catalogue/catalogue-file.js';
import { rowToEntry } from '../src/repositories/catalogue.js';
import { MMAP_SIZE } from '../src/db/database.js';
import { warmNextTick } from '../src/ops/tick-warmup.js';
import type { ServiceRow } from '../src/db/schema.js';

export interface Sample {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface CeilingSettings {
  mode: 'bytes' | 'work';
  port: number;
  /** bytes mode: one sample answer per scenario. */
  samples?: Record<string, Sample>;
  /** work mode. */
  databaseUrl?: string;
  schema?: string | null;
}

const settings = JSON.parse(fs.readFileSync(process.env.BENCH_CEILING_FILE ?? '', 'utf8')) as CeilingSettings;

/** Which benchmark scenario a request belongs to, from its method and path. */
export function scenarioOf(method: string, url: string): string {
  const parts = url.split('?')[0]!.split('/');
  // ['', 'api', op, key, ...]
  switch (parts[2]) {
    case 'return_services':
      return method === 'POST' ? 'return_services_private' : 'return_services_public';
    case 'service_details':
      return parts.length > 4 && parts[4] !== '' ? 'service_details_one' : 'service_details_all';
    case 'update_service':
      return 'update_service';
    case 'service_collection_widget':
      return 'widget';
    default:
      return 'unknown';
  }
}

function bytesServer(samples: Record<string, Sample>): http.Server {
  const prepared = new Map(Object.entries(samples).map(([k, s]) => [k, { status: s.status, headers: s.headers, body: Buffer.from(s.body) }]));
  return http.createServer((req, res) => {
    const s = prepared.get(scenarioOf(req.method ?? 'GET', req.url ?? '/'));
    // Requests with a body (POST) are drained before answering, as the service must.
    req.resume();
    req.on('end', () => {
      if (!s) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(s.status, s.headers);
      res.end(s.body);
    });
  });
}

// ---- work ceiling ----------------------------------------------------------------------------

interface Row {
  svc_id: string;
  usr_svc_id: string;
  verified?: number;
  updated_at?: number;
}

interface PublicRow {
  opted_in: number;
  svc_id: string | null;
  usr_svc_id: string | null;
  verified: number | null;
}

interface Store {
  catalogue: Map<string, CatalogueEntry>;
  /** Partner ids by api_key, read once at start. */
  partners: Map<string, number>;
  /** The one indexed query of the public view: the account by MD5 joined with its entries. */
  publicRows(md5: string): Promise<PublicRow[]>;
  person(md5: string): Promise<{ uid: number; opted_in: number; sid: number | null } | undefined>;
  central(uid: number): Promise<Row[]>;
  own(partnerId: number, sid: number): Promise<Row[]>;
  link(partnerId: number, sid: number): Promise<number | undefined>;
  push(partnerId: number, md5: string, svcId: string, usrSvcId: string, now: number): Promise<void>;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&apos;'));

function servicesXml(entries: { svc: CatalogueEntry; usrSvcId: string; show: boolean; verified: boolean }[]): string {
  if (entries.length === 0) return '<?xml version="1.0" encoding="UTF-8"?>\n<services/>\n';
  entries.sort((a, b) => {
    const x = a.svc.svcName.toLowerCase();
    const y = b.svc.svcName.toLowerCase();
    return x < y ? -1 : x > y ? 1 : a.svc.svcId < b.svc.svcId ? -1 : 1;
  });
  let out = '<?xml version="1.0" encoding="UTF-8"?>\n<services>';
  for (const e of entries) {
    out += `<service><svcId>${esc(e.svc.svcId)}</svcId><svcName>${esc(e.svc.svcName)}</svcName>`;
    if (e.show) out += `<usrSvcId>${esc(e.usrSvcId)}</usrSvcId>`;
    const url = buildProfileUrl(e.svc, e.usrSvcId);
    out += url === '' ? '<url/>' : `<url>${esc(url)}</url>`;
    out += `<verified>${e.verified ? 'TRUE' : 'FALSE'}</verified>`;
    out += e.svc.svcFavicon === '' ? '<svcFavicon/>' : `<svcFavicon>${esc(e.svc.svcFavicon)}</svcFavicon>`;
    out += '</service>';
  }
  return `${out}</services>\n`;
}

async function sqliteStore(file: string): Promise<Store> {
  const db = new SQLite(file);
  // The same durability as the service: WAL, a synced commit per write.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.pragma(`mmap_size = ${MMAP_SIZE}`);
  const catalogue = new Map((db.prepare('SELECT * FROM services WHERE disabled = 0').all() as ServiceRow[]).map((r) => [r.svc_id, rowToEntry(r)]));
  const person = db.prepare('SELECT u.id AS uid, u.opted_in, s.id AS sid FROM users u LEFT JOIN subjects s ON s.user_ref = u.id WHERE u.email_md5 = ?');
  const publicRows = db.prepare(
    'SELECT u.opted_in, ci.svc_id, ci.usr_svc_id, ci.verified FROM users u LEFT JOIN central_identities ci ON ci.user_ref = u.id WHERE u.email_md5 = ?',
  );
  const central = db.prepare('SELECT svc_id, usr_svc_id, verified, updated_at FROM central_identities WHERE user_ref = ?');
  const own = db.prepare('SELECT svc_id, usr_svc_id, updated_at FROM partner_identities WHERE partner_id = ? AND subject_id = ?');
  const link = db.prepare('SELECT user_ref FROM links WHERE partner_id = ? AND subject_id = ?');
  const upsert = db.prepare(
    'INSERT INTO partner_identities (partner_id, subject_id, svc_id, usr_svc_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (partner_id, subject_id, svc_id) DO UPDATE SET usr_svc_id = excluded.usr_svc_id, updated_at = excluded.updated_at',
  );
  const push = db.transaction((partnerId: number, md5: string, svcId: string, usrSvcId: string, now: number) => {
    const p = person.get(md5) as { sid: number | null } | undefined;
    if (!p || p.sid === null) return;
    upsert.run(partnerId, p.sid, svcId, usrSvcId, now, now);
  });
  const partners = new Map((db.prepare('SELECT id, api_key FROM partners').all() as { id: number; api_key: string }[]).map((r) => [r.api_key, r.id]));
  return {
    catalogue,
    partners,
    publicRows: async (md5) => publicRows.all(md5) as PublicRow[],
    person: async (md5) => person.get(md5) as never,
    central: async (uid) => central.all(uid) as Row[],
    own: async (partnerId, sid) => own.all(partnerId, sid) as Row[],
    link: async (partnerId, sid) => (link.get(partnerId, sid) as { user_ref: number } | undefined)?.user_ref,
    // IMMEDIATE: take the write lock first, as the service does (see src/db/group-commit.ts).
    push: async (partnerId, md5, svcId, usrSvcId, now) => void push.immediate(partnerId, md5, svcId, usrSvcId, now),
  };
}

async function pgStore(url: string, schema: string | null): Promise<Store> {
  pg.types.setTypeParser(20, (v) => Number(v));
  // Connections kept while idle, as the service keeps them (src/db/pg-pool.ts): else each open-loop
  // job, coming after the other servers' turns, would start on new backends.
  const pool = new pg.Pool({ connectionString: url, max: 10, idleTimeoutMillis: 0, ...(schema ? { options: `-c search_path=${schema}` } : {}) });
  const rows = (await pool.query('SELECT * FROM services WHERE disabled = 0')).rows as ServiceRow[];
  const q = async <T>(name: string, text: string, values: unknown[]) => (await pool.query({ name, text, values })).rows as T[];
  const partnerRows = (await pool.query('SELECT id, api_key FROM partners')).rows as { id: number; api_key: string }[];
  return {
    catalogue: new Map(rows.map((r) => [r.svc_id, rowToEntry(r)])),
    partners: new Map(partnerRows.map((r) => [r.api_key, Number(r.id)])),
    publicRows: (md5) =>
      q<PublicRow>(
        'public',
        'SELECT u.opted_in, ci.svc_id, ci.usr_svc_id, ci.verified FROM users u LEFT JOIN central_identities ci ON ci.user_ref = u.id WHERE u.email_md5 = $1',
        [md5],
      ),
    person: async (md5) =>
      (
        await q<{ uid: number; opted_in: number; sid: number | null }>(
          'person',
          'SELECT u.id AS uid, u.opted_in, s.id AS sid FROM users u LEFT JOIN subjects s ON s.user_ref = u.id WHERE u.email_md5 = $1',
          [md5],
        )
      )[0],
    central: (uid) => q<Row>('central', 'SELECT svc_id, usr_svc_id, verified, updated_at FROM central_identities WHERE user_ref = $1', [uid]),
    own: (partnerId, sid) =>
      q<Row>('own', 'SELECT svc_id, usr_svc_id, updated_at FROM partner_identities WHERE partner_id = $1 AND subject_id = $2', [partnerId, sid]),
    link: async (partnerId, sid) =>
      (await q<{ user_ref: number }>('link', 'SELECT user_ref FROM links WHERE partner_id = $1 AND subject_id = $2', [partnerId, sid]))[0]?.user_ref,
    push: async (partnerId, md5, svcId, usrSvcId, now) => {
      await q(
        'push',
        `INSERT INTO partner_identities (partner_id, subject_id, svc_id, usr_svc_id, created_at, updated_at)
         SELECT $1, s.id, $3, $4, $5, $5 FROM users u JOIN subjects s ON s.user_ref = u.id WHERE u.email_md5 = $2
         ON CONFLICT (partner_id, subject_id, svc_id) DO UPDATE SET usr_svc_id = excluded.usr_svc_id, updated_at = excluded.updated_at`,
        [partnerId, md5, svcId, usrSvcId, now],
      );
    },
  };
}

const XML = { 'Content-Type': 'application/xml; charset=utf-8' };
const NOT_FOUND = '<?xml version="1.0" encoding="UTF-8"?>\n<error><code>not_found</code><message>User Not Found</message></error>\n';

type Entry = { svc: CatalogueEntry; usrSvcId: string; show: boolean; verified: boolean };

/** The public view's entries, or null where the service answers 404. */
async function publicEntries(store: Store, md5: string): Promise<Entry[] | null> {
  const rows = await store.publicRows(md5);
  if (rows.length === 0 || rows[0]!.opted_in !== 1) return null;
  const entries: Entry[] = [];
  for (const r of rows) {
    const svc = r.svc_id === null ? undefined : store.catalogue.get(r.svc_id);
    if (svc) entries.push({ svc, usrSvcId: r.usr_svc_id ?? '', show: false, verified: r.verified === 1 });
  }
  return entries;
}

/** The partner's private view: its own pushes merged with the central entries when linked. */
async function privateEntries(store: Store, partnerId: number, md5: string): Promise<Entry[] | null> {
  const p = await store.person(md5);
  if (!p || p.sid === null) return null;
  const merged = new Map<string, Entry & { at: number }>();
  for (const r of await store.own(partnerId, p.sid)) {
    const svc = store.catalogue.get(r.svc_id);
    if (svc) merged.set(r.svc_id, { svc, usrSvcId: r.usr_svc_id, show: true, verified: false, at: r.updated_at ?? 0 });
  }
  const linked = await store.link(partnerId, p.sid);
  if (merged.size === 0 && p.opted_in !== 1) return null;
  if (linked !== undefined && p.opted_in === 1) {
    for (const r of await store.central(linked)) {
      const svc = store.catalogue.get(r.svc_id);
      if (!svc) continue;
      const mine = merged.get(r.svc_id);
      if (!mine || r.verified === 1 || (r.updated_at ?? 0) > mine.at) {
        merged.set(r.svc_id, { svc, usrSvcId: r.usr_svc_id, show: mine?.usrSvcId === r.usr_svc_id, verified: r.verified === 1, at: r.updated_at ?? 0 });
      }
    }
  }
  return [...merged.values()];
}

function widgetScript(entries: Entry[]): string {
  const data = entries.map((e) => ({
    svcId: e.svc.svcId,
    svcName: e.svc.svcName,
    usrSvcId: e.show ? e.usrSvcId : null,
    url: buildProfileUrl(e.svc, e.usrSvcId),
    verified: e.verified,
    svcFavicon: e.svc.svcFavicon,
  }));
  return `window.idsvcWidget=${JSON.stringify(data)};\n`;
}

const JS = { 'Content-Type': 'text/javascript; charset=utf-8' };

function workServer(store: Store): http.Server {
  async function answer(method: string, url: string): Promise<[number, string, Record<string, string>]> {
    const parts = url.split('?')[0]!.split('/');
    const scenario = scenarioOf(method, url);
    const partnerId = store.partners.get(parts[3] ?? '') ?? 0;
    const md5 = parts[4] ?? '';
    if (scenario === 'return_services_public' || scenario === 'return_services_private') {
      const entries = scenario === 'return_services_public' ? await publicEntries(store, md5) : await privateEntries(store, partnerId, md5);
      return entries === null ? [404, NOT_FOUND, XML] : [200, servicesXml(entries), XML];
    }
    if (scenario === 'widget') {
      const signed = url.includes('sig=');
      const entries = signed ? await privateEntries(store, partnerId, md5) : await publicEntries(store, md5);
      return [200, widgetScript(entries ?? []), JS];
    }
    if (scenario === 'update_service') {
      const svcId = parts[5] ?? '';
      const usrSvcId = decodeURIComponent(parts[6] ?? '');
      if (!store.catalogue.has(svcId)) return [404, NOT_FOUND, XML];
      await store.push(partnerId, md5, svcId, usrSvcId, Date.now());
      return [200, `<?xml version="1.0" encoding="UTF-8"?>\n<service><svcId>${esc(svcId)}</svcId><usrSvcId>${esc(usrSvcId)}</usrSvcId></service>\n`, XML];
    }
    return [404, NOT_FOUND, XML];
  }
  return http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      answer(req.method ?? 'GET', req.url ?? '/').then(
        ([status, body, headers]) => res.writeHead(status, headers).end(body),
        (err: unknown) => {
          process.stderr.write(`work ceiling: ${String(err)}\n`);
          res.writeHead(500).end();
        },
      );
    });
  });
}

async function main(): Promise<void> {
  let server: http.Server;
  if (settings.mode === 'bytes') {
    server = bytesServer(settings.samples ?? {});
  } else {
    const url = settings.databaseUrl ?? '';
    const store = url.startsWith('sqlite:') ? await sqliteStore(url.slice('sqlite:'.length)) : await pgStore(url, settings.schema ?? null);
    server = workServer(store);
  }
  server.keepAliveTimeout = 60_000;
  // As `idsvc serve` does: both sides are measured in the steady state the warm-up gives Node's ticks.
  await warmNextTick();
  server.listen(settings.port, '127.0.0.1', () => process.stdout.write('ready\n'));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

await main();
