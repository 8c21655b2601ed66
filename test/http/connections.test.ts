// No single connection can hold the server, and no one address can hold many (docs/operations.md,
// "Connections and timeouts"): a client that trickles its headers or its body is cut off within the
// configured time and answered in the API's format, one that sends nothing is closed unanswered,
// while others are served; a refused large body is answered within 10 s; connections past the
// per-address cap are refused while another address is served. Short settings keep the file fast;
// every time bound is several times the setting.
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLParser } from 'fast-xml-parser';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { parseAnswer, rawRequest, type RawAnswer } from '../helpers/raw-http.js';
import { servedForThisFile } from '../helpers/serve.js';

/** How long a test waits for the server to cut a connection before it calls it a failure. */
const GIVE_UP_MS = 20_000;

interface Held {
  socket: net.Socket;
  /** Milliseconds from connect to the server closing the connection; rejects after GIVE_UP_MS. */
  closed: Promise<number>;
  /** Milliseconds from connect to the first byte of an answer. */
  firstByte: Promise<number>;
  answer(): RawAnswer;
}

/** A connection the test writes to by hand, watching when the server answers and closes it. */
function hold(baseUrl: string, localAddress?: string): Held {
  const { port, hostname } = new URL(baseUrl);
  const socket = net.connect({ port: Number(port), host: hostname, ...(localAddress ? { localAddress } : {}) });
  const start = Date.now();
  const chunks: Buffer[] = [];
  socket.on('error', () => {});
  const firstByte = new Promise<number>((resolve) => socket.once('data', () => resolve(Date.now() - start)));
  socket.on('data', (c: Buffer) => chunks.push(c));
  const closed = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server still held the connection after ${GIVE_UP_MS} ms`));
    }, GIVE_UP_MS);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - start);
    });
  });
  // Whoever awaits `closed` sees a rejection; the others must not crash the run with it.
  closed.catch(() => {});
  return { socket, closed, firstByte, answer: () => parseAnswer(Buffer.concat(chunks), false) };
}

/** Writes `chunk` every `everyMs` while the connection is open. */
function trickle(h: Held, chunk: string, everyMs: number): void {
  const timer = setInterval(() => (h.socket.writable ? h.socket.write(chunk) : clearInterval(timer)), everyMs);
  h.socket.on('close', () => clearInterval(timer));
}

function errorCode(a: RawAnswer): string {
  return new XMLParser().parse(a.body).error.code;
}

describe('timeouts (headers 1 s, request 2 s, keep-alive 1 s)', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp({ HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000', KEEP_ALIVE_TIMEOUT_MS: '1000', RATE_LIMIT_PER_ADDRESS: '100000' });
    key = (await t.partner()).apiKey;
  });
  after(() => t.close());

  /** Another client's request, answered while the slow one is still open. */
  async function servedMeanwhile(slow: Held): Promise<void> {
    const res = await fetch(`${t.baseUrl}/api/service_details/${key}/github`);
    assert.equal(res.status, 200);
    await res.text();
    assert.equal(slow.socket.destroyed, false, 'the slow client was still connected while another was served');
  }

  test('a client trickling its headers (slow loris) is cut off and answered invalid_request', async (tc) => {
    const loris = hold(t.baseUrl);
    loris.socket.write(`GET /api/service_details/${key}/github HTTP/1.1\r\nHost: localhost\r\n`);
    trickle(loris, 'X-Slow: 1\r\n', 100);
    await servedMeanwhile(loris);
    const ms = await loris.closed;
    tc.diagnostic(`cut off after ${ms} ms`);
    assert.ok(ms < 8000, `cut off after ${ms} ms (setting 1000 ms)`);
    const a = loris.answer();
    assert.equal(a.status, 400);
    assert.equal(errorCode(a), 'invalid_request');
    assert.equal(a.headers.connection, 'close');
  });

  test('a client trickling its body is cut off and answered invalid_request', async (tc) => {
    const slow = hold(t.baseUrl);
    slow.socket.write(
      `POST /api/service_details/${key}/github HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000\r\n\r\n`,
    );
    trickle(slow, 'a', 100);
    await servedMeanwhile(slow);
    const ms = await slow.closed;
    tc.diagnostic(`cut off after ${ms} ms`);
    assert.ok(ms < 10_000, `cut off after ${ms} ms (setting 2000 ms)`);
    const a = slow.answer();
    assert.equal(a.status, 400);
    assert.equal(errorCode(a), 'invalid_request');
    assert.match(a.body, /did not arrive in time/);
  });

  test('a connection that sends nothing is closed, and answered nothing', async (tc) => {
    // A browser writes its request on a preconnected socket whenever it needs one: an answer the
    // server wrote there unasked would be read as that request's answer.
    const silent = hold(t.baseUrl);
    let received = 0;
    silent.socket.on('data', (c: Buffer) => {
      received += c.length;
    });
    await servedMeanwhile(silent);
    const ms = await silent.closed;
    tc.diagnostic(`closed after ${ms} ms`);
    assert.ok(ms < 8000, `closed after ${ms} ms (setting 1000 ms)`);
    assert.equal(received, 0, 'no byte was written on a connection that asked nothing');
  });

  test('an idle kept-alive connection is closed after its answer', async (tc) => {
    const idle = hold(t.baseUrl);
    idle.socket.write(`GET /api/service_details/${key}/github HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    const answeredAt = await idle.firstByte;
    const ms = (await idle.closed) - answeredAt;
    tc.diagnostic(`closed ${ms} ms after the answer`);
    assert.ok(ms < 8000, `closed ${ms} ms after the answer (setting 1000 ms)`);
    assert.equal(idle.answer().status, 200);
  });
});

describe('a refused large body (default timeouts)', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_ADDRESS: '100000' });
    key = (await t.partner()).apiKey;
  });
  after(() => t.close());

  const post = (headers: string) =>
    `POST /api/service_details/${key}/github HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n${headers}\r\n`;

  test('announced by Content-Length and then stalled: 413 within 10 s, while another client is served', async (tc) => {
    const stalled = hold(t.baseUrl);
    stalled.socket.write(post('Content-Length: 10000000\r\n'));
    stalled.socket.write(Buffer.alloc(1_000_000, 'a'));
    const probe = await fetch(`${t.baseUrl}/api/service_details/${key}/github`);
    assert.equal(probe.status, 200);
    const ms = await stalled.firstByte;
    tc.diagnostic(`answered after ${ms} ms`);
    assert.ok(ms < 10_000, `answered after ${ms} ms`);
    await stalled.closed;
    assert.equal(stalled.answer().status, 413);
    assert.equal(errorCode(stalled.answer()), 'payload_too_large');
  });

  test('chunked, over the limit and then stalled: 413 within 10 s', async (tc) => {
    const stalled = hold(t.baseUrl);
    stalled.socket.write(post('Transfer-Encoding: chunked\r\n'));
    const chunk = Buffer.alloc(100_000, 'a');
    stalled.socket.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
    const ms = await stalled.firstByte;
    tc.diagnostic(`answered after ${ms} ms`);
    assert.ok(ms < 10_000, `answered after ${ms} ms`);
    await stalled.closed;
    assert.equal(stalled.answer().status, 413);
  });

  test('sent in full, under and over the 16 MiB read to drop: 413 within 10 s', async (tc) => {
    for (const size of [10_000_000, 20_000_000]) {
      const started = Date.now();
      const a = await rawRequest(t.baseUrl, post(`Content-Length: ${size}\r\n`), { body: Buffer.alloc(size, 'a') });
      const ms = Date.now() - started;
      assert.equal(a.status, 413, `${size}: ${a.body.slice(0, 200)}`);
      tc.diagnostic(`${size} bytes answered after ${ms} ms`);
      assert.ok(ms < 10_000, `${size} bytes answered after ${ms} ms`);
    }
  });
});

/** Connections kept open, each having had one answer (so the server has surely counted it). */
async function keptOpen(baseUrl: string, n: number, localAddress?: string): Promise<Held[]> {
  const held: Held[] = [];
  for (let i = 0; i < n; i++) {
    const h = hold(baseUrl, localAddress);
    h.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await h.firstByte;
    assert.equal(h.answer().status, 200, 'each held connection is served');
    held.push(h);
  }
  return held;
}

describe('connections per address (cap 3)', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp({ CONNECTIONS_PER_ADDRESS: '3', RATE_LIMIT_PER_ADDRESS: '100000' });
    key = (await t.partner()).apiKey;
  });
  after(() => t.close());

  test('past the cap a connection is refused rate_limited in its format; another address is served; a freed place is used again', async () => {
    const held = await keptOpen(t.baseUrl, 3);
    const api = await rawRequest(t.baseUrl, `GET /api/service_details/${key}/github HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    assert.equal(api.status, 429);
    assert.equal(errorCode(api), 'rate_limited');
    assert.equal(api.headers['retry-after'], '1');
    assert.equal(api.headers.connection, 'close');
    const json = await rawRequest(t.baseUrl, `GET /api/service_details/${key}/github?format=json HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    assert.equal((JSON.parse(json.body) as { error: { code: string } }).error.code, 'rate_limited');
    const site = await rawRequest(t.baseUrl, 'GET /u/someone HTTP/1.1\r\nHost: localhost\r\n\r\n');
    assert.equal(site.status, 429);
    assert.match(site.headers['content-type'] ?? '', /text\/html/);

    // Another address (another loopback address is another peer) is served meanwhile.
    const other = await rawRequest(t.baseUrl, `GET /api/service_details/${key}/github HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`, {
      localAddress: '127.0.0.2',
    });
    assert.equal(other.status, 200);

    // A place freed is free again once the server has seen the close.
    held[0]!.socket.destroy();
    let again: RawAnswer | undefined;
    for (let i = 0; i < 100 && again?.status !== 200; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      again = await rawRequest(t.baseUrl, `GET /api/service_details/${key}/github HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    }
    assert.equal(again?.status, 200);
    for (const h of held) h.socket.destroy();
  });
});

describe('connections per address behind a trusted proxy (cap 2, TRUST_PROXY=127.0.0.1)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ CONNECTIONS_PER_ADDRESS: '2', TRUST_PROXY: '127.0.0.1', RATE_LIMIT_PER_ADDRESS: '100000' });
  });
  after(() => t.close());

  test('the trusted proxy is not capped; any other peer is', async () => {
    const proxy = await keptOpen(t.baseUrl, 4);
    const direct = await keptOpen(t.baseUrl, 2, '127.0.0.2');
    const past = await rawRequest(t.baseUrl, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n', { localAddress: '127.0.0.2' });
    assert.equal(past.status, 429);
    for (const h of [...proxy, ...direct]) h.socket.destroy();
  });
});

describe('the real `idsvc serve` process', () => {
  const { database, serve } = servedForThisFile();

  test('takes its timeouts and cap from the environment: a slow loris is cut off, a connection past the cap refused', async (tc) => {
    const db = database('edge');
    const served = await serve({ ...db.env, HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000', CONNECTIONS_PER_ADDRESS: '2', BACKGROUND_JOBS: '0' });
    const loris = hold(served.url);
    loris.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
    trickle(loris, 'X-Slow: 1\r\n', 100);
    const ms = await loris.closed;
    tc.diagnostic(`cut off after ${ms} ms`);
    assert.ok(ms < 8000, `cut off after ${ms} ms (setting 1000 ms)`);
    assert.equal(loris.answer().status, 400);

    const held = await keptOpen(served.url, 2);
    const past = await rawRequest(served.url, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    assert.equal(past.status, 429);
    for (const h of held) h.socket.destroy();
  });
});
