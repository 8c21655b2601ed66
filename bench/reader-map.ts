// Why the service's read connection maps nothing (src/db/database.ts): two connections on a copy of
// a benchmark dataset, one looking people up as the public view does, the other committing a row
// every N lookups; each lookup timed, and the first after each commit apart. Run with the reader
// mapped (2 GiB, as the writer) and unmapped, without commits and with them.
// `node --import tsx bench/reader-map.ts [DATASET] [LOOKUPS]` (default sqlite-1000000, 200000).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { MMAP_SIZE } from '../src/db/database.js';

const dataset = process.argv[2] ?? 'sqlite-1000000';
const lookups = Number(process.argv[3] ?? 200_000);
const source = path.join(import.meta.dirname, 'data', `${dataset}.sqlite`);
if (!fs.existsSync(source)) throw new Error(`no dataset ${source}: build it with npm run bench`);

const PUBLIC_ROWS =
  'SELECT u.opted_in, u.pro, ci.svc_id, ci.usr_svc_id, ci.verified, ci.source_partner_id, ci.updated_at, u.id ' +
  'FROM users u LEFT JOIN central_identities ci ON ci.user_ref = u.id WHERE u.email_proven_at IS NOT NULL AND u.email_md5 = ?';

function run(mapSize: number, commitEvery: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-reader-map-'));
  const file = path.join(dir, 'db.sqlite');
  fs.copyFileSync(source, file);
  const writer = new SQLite(file);
  writer.pragma('journal_mode = WAL');
  writer.pragma('synchronous = FULL');
  const reader = new SQLite(file);
  reader.pragma(`mmap_size = ${mapSize}`);
  reader.pragma('query_only = ON');
  try {
    const ids = reader.prepare('SELECT email_md5 FROM users').pluck().all() as string[];
    const lookup = reader.prepare(PUBLIC_ROWS).raw(true);
    writer.exec('CREATE TABLE bench_commits (n INTEGER)');
    const commit = writer.prepare('INSERT INTO bench_commits VALUES (?)');
    let seed = 1;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return ids[Math.floor((seed / 2147483648) * ids.length)]!;
    };
    // Warm, so that the map holds what a running server's would.
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
    each.sort((a, b) => a - b);
    afterCommit.sort((a, b) => a - b);
    const first = afterCommit.length > 0 ? `, first after a commit ${afterCommit[afterCommit.length >> 1]!.toFixed(0)} µs (median)` : '';
    return `${mapSize === 0 ? 'unmapped' : 'mapped  '}  commit every ${commitEvery || '–'}: ${mean.toFixed(1)} µs a lookup, p99 ${each[Math.floor(each.length * 0.99)]!.toFixed(1)}${first}`;
  } finally {
    reader.close();
    writer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

for (const every of [0, 5000, 500]) for (const map of [MMAP_SIZE, 0]) console.log(run(map, every));
