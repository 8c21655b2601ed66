// Why the service's read connection maps nothing and keeps a small page cache (src/db/database.ts):
// two connections on a working copy of a benchmark dataset, one looking people up as the public view
// does, the other committing a row every N lookups; each lookup timed, the first after each commit
// apart. The reader mapped (2 GiB, as the writer) or not, with the service's 2 MB page cache or this
// build's default of 16 MB; without commits and with them.
// `node --import tsx bench/reader-map.ts [DATASET] [LOOKUPS]` (default sqlite-1000000, 200000).
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { MMAP_SIZE } from '../src/db/database.js';
import { DATA_DIR, workingCopy, type Dataset } from './dataset.js';
import { seededRandom } from './random.js';
import { median, percentile } from './stats.js';

const name = process.argv[2] ?? 'sqlite-1000000';
const lookups = Number(process.argv[3] ?? 200_000);
const metaFile = path.join(DATA_DIR, `${name}.meta.json`);
if (!fs.existsSync(metaFile)) throw new Error(`no dataset ${name}: build it with npm run bench`);
const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8')) as Dataset;
if (meta.backend !== 'sqlite') throw new Error('a SQLite dataset, please');

const PUBLIC_ROWS =
  'SELECT u.opted_in, u.pro, ci.svc_id, ci.usr_svc_id, ci.verified, ci.source_partner_id, ci.updated_at, u.id ' +
  'FROM users u LEFT JOIN central_identities ci ON ci.user_ref = u.id WHERE u.email_proven_at IS NOT NULL AND u.email_md5 = ?';

interface Reader {
  label: string;
  mmapSize: number;
  cacheSize: number;
}
const READERS: Reader[] = [
  { label: 'mapped, 16 MB cache  ', mmapSize: MMAP_SIZE, cacheSize: -16000 },
  { label: 'unmapped, 16 MB cache', mmapSize: 0, cacheSize: -16000 },
  { label: 'unmapped, 2 MB cache ', mmapSize: 0, cacheSize: -2000 },
];

async function run(r: Reader, commitEvery: number): Promise<string> {
  // The benchmark's own copy (page by page, fsynced): a plain file copy would leave the page cache
  // in a state the mapped reader would be measured against.
  const file = (await workingCopy(meta, 'reader_map')).databaseUrl.slice('sqlite:'.length);
  try {
    const writer = new SQLite(file);
    const reader = new SQLite(file);
    try {
      writer.pragma('journal_mode = WAL');
      writer.pragma('synchronous = FULL');
      reader.pragma(`mmap_size = ${r.mmapSize}`);
      reader.pragma(`cache_size = ${r.cacheSize}`);
      reader.pragma('query_only = ON');
      const ids = reader.prepare('SELECT email_md5 FROM users').pluck().all() as string[];
      const lookup = reader.prepare(PUBLIC_ROWS).raw(true);
      writer.exec('CREATE TABLE bench_commits (n INTEGER)');
      const commit = writer.prepare('INSERT INTO bench_commits VALUES (?)');
      const draw = seededRandom(1);
      const next = () => ids[Math.floor(draw() * ids.length)]!;
      // Warm, so that the map and the caches hold what a running server's would.
      for (let i = 0; i < lookups; i++) lookup.all(next());
      const each: number[] = [];
      const afterCommit: number[] = [];
      for (let i = 0; i < lookups; i++) {
        const commits = commitEvery > 0 && i % commitEvery === 0;
        if (commits) commit.run(i);
        const start = process.hrtime.bigint();
        lookup.all(next());
        const us = Number(process.hrtime.bigint() - start) / 1000;
        each.push(us);
        if (commits) afterCommit.push(us);
      }
      const mean = each.reduce((a, b) => a + b, 0) / each.length;
      const p99 = percentile(
        each.sort((a, b) => a - b),
        99,
      );
      const first = afterCommit.length > 0 ? `, first after a commit ${median(afterCommit).toFixed(0)} µs (median)` : '';
      return `${r.label}  commit every ${commitEvery || '–'}: ${mean.toFixed(1)} µs a lookup, p99 ${p99.toFixed(1)}${first}`;
    } finally {
      reader.close();
      writer.close();
    }
  } finally {
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  }
}

for (const every of [0, 5000, 500]) for (const r of READERS) console.log(await run(r, every));
