// The benchmark's pure parts (bench/): the Zipf sampler, the open-loop schedule and percentiles,
// the request pools and the command line. No server and no timing: every figure is computed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseBenchArgs } from '../../bench/args.js';
import { holdReclaim } from '../../bench/host-reclaim.js';
import { buildPool, MIX, type RequestSource } from '../../bench/requests.js';
import { rankToUser, seededRandom, ZipfSampler } from '../../bench/random.js';
import { dueAt, dueBy, percentile, summarise } from '../../bench/stats.js';

test('seeded draws: the same seed gives the same sequence, another seed another one, all in [0, 1)', () => {
  const a = seededRandom(42);
  const b = seededRandom(42);
  const c = seededRandom(43);
  const xs = Array.from({ length: 1000 }, () => a());
  assert.deepEqual(
    xs,
    Array.from({ length: 1000 }, () => b()),
  );
  assert.notDeepEqual(
    xs,
    Array.from({ length: 1000 }, () => c()),
  );
  assert.ok(xs.every((x) => x >= 0 && x < 1));
});

test('Zipf (s = 1): each rank is drawn in proportion to 1 / rank', () => {
  const n = 1000;
  const zipf = new ZipfSampler(n, 1);
  const draw = seededRandom(7);
  const counts = new Float64Array(n + 1);
  const draws = 400_000;
  for (let i = 0; i < draws; i++) counts[zipf.rank(draw())]!++;
  let harmonic = 0;
  for (let k = 1; k <= n; k++) harmonic += 1 / k;
  // Expected share of rank k: (1/k) / H(n). Ranks 1..5 hold 2.3 % to 13 % of the draws; 2 % error
  // is about 5 standard deviations of a binomial count at rank 1 and more further down.
  for (const k of [1, 2, 3, 5, 10, 100]) {
    const expected = 1 / k / harmonic;
    const seen = counts[k]! / draws;
    assert.ok(Math.abs(seen - expected) / expected < (k <= 10 ? 0.03 : 0.15), `rank ${k}: ${seen} against ${expected}`);
  }
  // The tail is there too: a third of the draws fall on ranks above 100 (1 - H(100)/H(1000) = 0.3).
  const above100 = counts.slice(101).reduce((s, x) => s + x, 0) / draws;
  assert.ok(Math.abs(above100 - (1 - 5.1874 / harmonic)) < 0.01, `share above rank 100: ${above100}`);
  assert.ok(counts[0] === 0 && counts.slice(1).every((x) => x >= 0));
});

test('Zipf: the edges of the cumulative weights map to the first and last rank', () => {
  const zipf = new ZipfSampler(10, 1);
  assert.equal(zipf.rank(0), 1);
  assert.equal(zipf.rank(0.999999999), 10);
  assert.equal(new ZipfSampler(1).rank(0.5), 1);
  assert.throws(() => new ZipfSampler(0), /at least one rank/);
});

test('ranks spread over the users: a permutation of 1..n, not users 1, 2, 3 side by side', () => {
  for (const n of [1, 2, 10, 97, 1000, 65536]) {
    const seen = new Set<number>();
    for (let r = 1; r <= n; r++) {
      const u = rankToUser(r, n);
      assert.ok(u >= 1 && u <= n);
      seen.add(u);
    }
    assert.equal(seen.size, n, `n = ${n}`);
  }
  assert.notEqual(rankToUser(2, 1000) - rankToUser(1, 1000), 1);
});

test('the open-loop schedule: request i is due i / rate after the start, whatever was sent', () => {
  assert.equal(dueAt(1000, 500, 0), 1000);
  assert.equal(dueAt(1000, 500, 1), 1002);
  assert.equal(dueAt(1000, 500, 500), 2000);
  assert.equal(dueBy(1000, 500, 999.9, 10_000), 0);
  assert.equal(dueBy(1000, 500, 1000, 10_000), 1);
  assert.equal(dueBy(1000, 500, 1001.9, 10_000), 1);
  assert.equal(dueBy(1000, 500, 1002, 10_000), 2);
  // A generator that wakes late owes every request that came due meanwhile, not one.
  assert.equal(dueBy(1000, 500, 1100, 10_000), 51);
  assert.equal(dueBy(1000, 500, 1e9, 10_000), 10_000);
});

test('percentiles are nearest-rank over sorted values; the summary does not reorder its input', () => {
  const sorted = Float64Array.from({ length: 1000 }, (_, i) => i + 1);
  assert.equal(percentile(sorted, 50), 500);
  assert.equal(percentile(sorted, 99), 990);
  assert.equal(percentile(sorted, 99.9), 999);
  assert.equal(percentile(sorted, 100), 1000);
  assert.equal(percentile([3], 99.9), 3);
  assert.ok(Number.isNaN(percentile([], 50)));
  const latencies = Float64Array.from([5, 1, 4, 2, 3, 100, 0.5, 0.25, 7, 6]);
  const s = summarise(latencies);
  assert.deepEqual(s, { count: 10, min_ms: 0.25, p50_ms: 3, p99_ms: 100, p999_ms: 100, max_ms: 100 });
  assert.equal(latencies[0], 5, 'the caller keeps its order');
});

function source(users: number): RequestSource {
  const ids = Buffer.from(Array.from({ length: users }, (_, i) => `${String(i + 1).padStart(32, '0')}\n`).join(''), 'latin1');
  return {
    users,
    ids,
    services: ['github', 'mastodon', 'keybase'],
    partners: [1, 2, 3, 4, 5].map((p) => ({ apiKey: `key${p}`, apiToken: `token${p}` })),
    widgetExpiry: 2_000_000_000,
  };
}

test('request pools: reproducible from the seed; single scenarios use the first partner and its token', () => {
  const src = source(50);
  const a = buildPool('return_services_private', src, 5, 200);
  assert.deepEqual(a, buildPool('return_services_private', src, 5, 200));
  assert.notDeepEqual(a, buildPool('return_services_private', src, 6, 200));
  for (const r of a) {
    assert.equal(r.method, 'POST');
    assert.match(r.path, /^\/api\/return_services\/key1\/0{30}\d{2}$/);
    assert.equal(r.body, 'api_token=token1');
  }
  const writes = buildPool('update_service', src, 1, 100);
  assert.equal(new Set(writes.map((r) => r.path)).size, 100, 'every push carries its own value');
});

test('the mixed pool: 90 % reads over the partners, 10 % update_service, popular users drawn most', () => {
  const src = source(1000);
  const pool = buildPool('mixed', src, 3, 50_000);
  const kind = (path: string, method: string) =>
    path.startsWith('/api/update_service/')
      ? 'update_service'
      : path.startsWith('/api/service_collection_widget/')
        ? 'widget'
        : method === 'POST'
          ? 'return_services_private'
          : 'return_services_public';
  const counts = new Map<string, number>();
  const partners = new Set<string>();
  const users = new Map<string, number>();
  for (const r of pool) {
    counts.set(kind(r.path, r.method), (counts.get(kind(r.path, r.method)) ?? 0) + 1);
    const [, , , key, user] = r.path.split('?')[0]!.split('/');
    partners.add(key!);
    users.set(user!, (users.get(user!) ?? 0) + 1);
    if (r.body !== null) assert.equal(r.body, `api_token=token${key!.slice(3)}`, 'each partner proves itself with its own token');
    if (kind(r.path, r.method) === 'widget') assert.match(r.path, /\/TRUE\?exp=2000000000&sig=[0-9a-f]{64}$/);
  }
  for (const [k, share] of MIX) assert.ok(Math.abs((counts.get(k) ?? 0) / pool.length - share) < 0.01, `${k}: ${counts.get(k)}`);
  assert.equal(partners.size, 5);
  // Under Zipf the most-drawn user gets about 1 / H(1000) = 13 % of the calls; uniformly it would be 0.1 %.
  const top = Math.max(...users.values()) / pool.length;
  assert.ok(top > 0.12 && top < 0.145, `most-drawn user: ${top}`);
});

test('command line: full and quick defaults, shares as percentages, errors that name the option', () => {
  const full = parseBenchArgs([]);
  assert.equal(full.users, 1_000_000);
  assert.deepEqual(full.backends, ['sqlite']);
  assert.deepEqual(full.open.shares, [0.25, 0.5, 0.75, 0.9]);
  assert.equal(full.closed.rounds, 3);
  assert.equal(full.scenarios.length, 6);
  assert.equal(full.out, null);
  const quick = parseBenchArgs(['--quick', '--postgres', '--users', '10000', '--env', 'PARTNER_CACHE=0', '--env', 'X=a=b']);
  assert.deepEqual(quick.backends, ['sqlite', 'postgres']);
  assert.deepEqual(quick.open.shares, [0.5]);
  assert.equal(quick.closed.rounds, 1);
  assert.deepEqual(quick.serviceEnv, { PARTNER_CACHE: '0', X: 'a=b' });
  assert.equal(parseBenchArgs(['--quick', '--rounds', '4']).closed.rounds, 4, 'an explicit value beats the quick default');
  assert.deepEqual(parseBenchArgs(['--open-rates', '10,60']).open.shares, [0.1, 0.6]);
  assert.deepEqual(parseBenchArgs(['--no-open']).open.shares, []);
  assert.equal(parseBenchArgs(['--warmup', '0']).closed.warmupS, 0);
  assert.equal(full.open.baseRps, null, "shares are of the service's own highest rate unless --open-base is given");
  assert.equal(full.open.timelineDir, null);
  assert.equal(full.serviceLog, null);
  const probing = parseBenchArgs(['--open-base', '2400', '--timeline', 'tl', '--service-log', 'svc.log']);
  assert.equal(probing.open.baseRps, 2400);
  assert.equal(probing.open.timelineDir, path.resolve('tl'));
  assert.equal(probing.serviceLog, path.resolve('svc.log'));
  assert.throws(() => parseBenchArgs(['--open-base', '0']), /--open-base/);
  assert.throws(() => parseBenchArgs(['--users', '50']), /--users/);
  assert.throws(() => parseBenchArgs(['--rounds', '1.5']), /--rounds/);
  assert.throws(() => parseBenchArgs(['--scenarios', 'everything']), /unknown scenario everything/);
  assert.throws(() => parseBenchArgs(['--open-rates', '500']), /--open-rates/);
  assert.throws(() => parseBenchArgs(['--no-sqlite']), /nothing to run/);
  assert.throws(() => parseBenchArgs(['--env', 'NOEQUALS']), /KEY=VALUE/);
  assert.throws(() => parseBenchArgs(['--seed', 'x']), /--seed/);
  assert.throws(() => parseBenchArgs(['--bogus']), /bogus/);
});

test("the host's reclaim: only running kdamonds with a pageout scheme are paused, and put back on", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-kdamonds-'));
  try {
    // A DAMON sysfs tree: 0 pages out and runs, 1 pages out but is off, 2 runs another scheme.
    const kdamond = (id: string, state: string, action: string) => {
      const scheme = path.join(root, id, 'contexts', '0', 'schemes', '0');
      fs.mkdirSync(scheme, { recursive: true });
      fs.writeFileSync(path.join(root, id, 'state'), `${state}\n`);
      fs.writeFileSync(path.join(scheme, 'action'), `${action}\n`);
    };
    kdamond('0', 'on', 'pageout');
    kdamond('1', 'off', 'pageout');
    kdamond('2', 'on', 'stat');
    const state = (id: string) => fs.readFileSync(path.join(root, id, 'state'), 'utf8').trim();
    const logged: string[] = [];

    const watched = holdReclaim(false, (m) => logged.push(m), root);
    assert.deepEqual(watched.reclaim, { found: 1, paused: false });
    assert.equal(state('0'), 'on', 'without --pause-reclaim nothing is touched');
    assert.match(logged[0] ?? '', /--pause-reclaim/);

    const held = holdReclaim(true, (m) => logged.push(m), root);
    assert.deepEqual(held.reclaim, { found: 1, paused: true });
    assert.deepEqual([state('0'), state('1'), state('2')], ['off', 'off', 'on']);
    held.resume();
    held.resume();
    assert.deepEqual([state('0'), state('1'), state('2')], ['on', 'off', 'on']);

    assert.deepEqual(holdReclaim(true, () => {}, path.join(root, 'missing')).reclaim, { found: 0, paused: false });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
