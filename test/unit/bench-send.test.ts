// bench/send.ts sends an exact number of requests from a pool (bench/instructions.sh divides the
// instructions it counts by that number): the pool's lines in order from FROM, wrapping around, each
// answered before the run ends, and an answer of 400 or more fails the run.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { readPool, send } from '../../bench/send.js';

const seen: string[] = [];
let server: http.Server;
let port: number;
let dir: string;

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body}`);
      res.statusCode = req.url === '/missing' ? 404 : 200;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-send-'));
});
after(() => {
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('sends COUNT requests from line FROM on, wrapping around, bodies as forms', async () => {
  const file = path.join(dir, 'pool.tsv');
  fs.writeFileSync(file, 'GET\t/a\t\nPOST\t/b\tx=1\nGET\t/c\t\n');
  seen.length = 0;
  await send(port, readPool(file), 2, 5, 2);
  assert.equal(seen.length, 5);
  // Two at a time may arrive in either order: what each line was sent, and how often, is fixed.
  assert.deepEqual([...seen].sort(), ['GET /a ', 'GET /a ', 'GET /c ', 'GET /c ', 'POST /b x=1'].sort());
});

test('an answer of 400 or more fails the run', async () => {
  const file = path.join(dir, 'missing.tsv');
  fs.writeFileSync(file, 'GET\t/missing\t\n');
  await assert.rejects(send(port, readPool(file), 0, 3, 1), /answered 404/);
});

test('an empty pool is refused', () => {
  const file = path.join(dir, 'empty.tsv');
  fs.writeFileSync(file, '\n');
  assert.throws(() => readPool(file), /empty request pool/);
});
