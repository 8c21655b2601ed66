// Request ids (src/http/request-ids.ts): UUIDs of version 8 with the RFC variant, each one new, a
// process's ids sharing their random part and counting in the last 12 hex digits, and another
// process drawing another random part.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { newRequestId } from '../../src/http/request-ids.js';

const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('request ids are version 8 UUIDs, all different, counted after a random part of the process', () => {
  const ids = Array.from({ length: 10_000 }, () => newRequestId());
  for (const id of ids) assert.match(id, UUID_V8);
  assert.equal(new Set(ids).size, ids.length);
  const prefix = ids[0]!.slice(0, 24);
  assert.ok(ids.every((id) => id.startsWith(prefix)));
  const counts = ids.map((id) => Number.parseInt(id.slice(24), 16));
  for (let i = 1; i < counts.length; i++) assert.equal(counts[i], counts[i - 1]! + 1);
});

test('another process draws another random part', () => {
  const module = fileURLToPath(import.meta.resolve('../../src/http/request-ids.js'));
  const script = `import(${JSON.stringify(module)}).then((m) => process.stdout.write(m.newRequestId()))`;
  const other = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.match(other, UUID_V8);
  assert.notEqual(other.slice(0, 24), newRequestId().slice(0, 24));
});
