// Request ids (src/http/request-ids.ts): UUIDs of version 8 with the RFC variant, each one new, a
// process's ids sharing their random part, their last 12 hex digits a keyed permutation of the
// request's number (so that consecutive ids do not count the requests between them), and another
// process drawing another random part.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { newRequestId, permute48 } from '../../src/http/request-ids.js';

const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('request ids are version 8 UUIDs, all different, sharing the random part of the process', () => {
  const ids = Array.from({ length: 20_000 }, () => newRequestId());
  for (const id of ids) assert.match(id, UUID_V8);
  assert.equal(new Set(ids).size, ids.length);
  const prefix = ids[0]!.slice(0, 24);
  assert.ok(ids.every((id) => id.startsWith(prefix)));
});

test('the last 48 bits do not count: consecutive ids are far apart, in no order', () => {
  const tails = Array.from({ length: 1000 }, () => Number.parseInt(newRequestId().slice(24), 16));
  let ascending = 0;
  let near = 0;
  for (let i = 1; i < tails.length; i++) {
    if (tails[i]! > tails[i - 1]!) ascending++;
    if (Math.abs(tails[i]! - tails[i - 1]!) < 1000) near++;
  }
  // A counter ascends every time by 1; a permutation is about as often up as down, and never near.
  assert.ok(ascending > 400 && ascending < 600, `${ascending} of 999 ascending`);
  assert.equal(near, 0);
});

test('the permutation maps distinct numbers to distinct numbers below 2^48, the largest included', () => {
  const seen = new Set<number>();
  for (const n of [0, 1, 2, 2 ** 24 - 1, 2 ** 24, 2 ** 48 - 1, ...Array.from({ length: 50_000 }, (_, i) => i * 7919 + 3)]) {
    const p = permute48(n);
    assert.ok(Number.isInteger(p) && p >= 0 && p < 2 ** 48, `${n} → ${p}`);
    seen.add(p);
  }
  assert.equal(seen.size, 50_006);
});

test('another process draws another random part', () => {
  const module = fileURLToPath(import.meta.resolve('../../src/http/request-ids.js'));
  const script = `import(${JSON.stringify(module)}).then((m) => process.stdout.write(m.newRequestId()))`;
  const other = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.match(other, UUID_V8);
  assert.notEqual(other.slice(0, 24), newRequestId().slice(0, 24));
});
