// A body the server will not read still costs the client nothing of its answer (issue 20): the
// server reads or discards what was sent before it closes the connection, so a client that sends
// a large body with `Connection: close` gets the whole answer, never a reset half-way.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { rawRequest, type RawAnswer } from '../helpers/raw-http.js';

let t: TestApp;
let key: string;
before(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_ADDRESS: '100000' });
  key = (await t.partner()).apiKey;
});
after(() => t.close());

const head = (method: string, path: string, headers: Record<string, string>) =>
  `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;

function assertWholeError(a: RawAnswer, status: number, code: string): void {
  assert.ok(a.complete, `the answer was cut short: ${a.body.length} bytes of ${a.headers['content-length']} (${a.error ?? 'no socket error'})`);
  assert.equal(a.error, undefined);
  assert.equal(a.status, status, a.body.slice(0, 300));
  assert.equal(XMLValidator.validate(a.body), true, a.body);
  assert.equal(new XMLParser().parse(a.body).error.code, code);
  assert.match(a.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
}

test('a GET with a 1.1 MB body and Connection: close gets a whole 413, every time', async () => {
  // The 186 KB service_details answer was cut at 127 KB: the server closed the socket with the
  // unread body in its receive buffer, and the kernel reset the connection.
  const body = Buffer.alloc(1_100_000, 'a');
  for (let i = 0; i < 5; i++) {
    const a = await rawRequest(t.baseUrl, head('GET', `/api/service_details/${key}/combined`, { 'Content-Length': String(body.length), Connection: 'close' }), {
      body,
    });
    assertWholeError(a, 413, 'payload_too_large');
  }
});

test('a GET with a body within the limit gets its whole 200 answer', async () => {
  const body = Buffer.alloc(60_000, 'a');
  for (let i = 0; i < 5; i++) {
    const a = await rawRequest(t.baseUrl, head('GET', `/api/service_details/${key}/combined`, { 'Content-Length': String(body.length), Connection: 'close' }), {
      body,
    });
    assert.equal(a.status, 200);
    assert.ok(a.complete, `the answer was cut short: ${a.body.length} bytes of ${a.headers['content-length']} (${a.error ?? 'no socket error'})`);
    assert.equal(XMLValidator.validate(a.body), true);
    assert.ok(a.body.length > 150_000);
  }
});

test('a POST of 10 MB gets a whole 413 (no reset while it sends), by Content-Length or chunked, kept alive or closed', async () => {
  const body = Buffer.alloc(10_000_000, 'a');
  const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
  for (const connection of ['close', 'keep-alive']) {
    const declared = await rawRequest(
      t.baseUrl,
      head('POST', `/api/service_details/${key}/combined`, { ...form, 'Content-Length': String(body.length), Connection: connection }),
      { body },
    );
    assertWholeError(declared, 413, 'payload_too_large');
    assert.equal(declared.headers.connection, 'close');
    const chunk = (b: Buffer) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
    const chunked = Buffer.concat([...Array.from({ length: 100 }, () => chunk(body.subarray(0, 100_000))), Buffer.from('0\r\n\r\n')]);
    const streamed = await rawRequest(
      t.baseUrl,
      head('POST', `/api/service_details/${key}/combined`, { ...form, 'Transfer-Encoding': 'chunked', Connection: connection }),
      { body: chunked },
    );
    assertWholeError(streamed, 413, 'payload_too_large');
  }
});

test('a body refused before it is read does not cut the answer short', async () => {
  // credentials_in_query stops the request before its body is parsed; the whole answer still
  // arrives, and the client can send its body to the end.
  const body = Buffer.alloc(10_000_000, 'a');
  const a = await rawRequest(
    t.baseUrl,
    head('POST', `/api/service_details/${key}/combined?api_token=x`, {
      'Content-Type': 'application/x-www-form-urlencoded',
      'Content-Length': String(body.length),
      Connection: 'close',
    }),
    { body },
  );
  assertWholeError(a, 400, 'credentials_in_query');
});

test('a connection stays usable after a GET whose body was discarded', async () => {
  // Two requests on one keep-alive connection: the first one's body must not be read as the second request.
  const body = 'x'.repeat(1000);
  const first = head('GET', `/api/service_details/${key}/github`, { 'Content-Length': String(body.length) });
  const second = head('GET', `/api/service_details/${key}/gitlab`, { Connection: 'close' });
  const a = await rawRequest(t.baseUrl, first, { body: body + second });
  assert.equal(a.status, 200);
  // The raw client reads both answers into one buffer: the second one follows the first.
  assert.match(a.body, /<svcId>github<\/svcId>[\s\S]*HTTP\/1\.1 200 OK[\s\S]*<svcId>gitlab<\/svcId>/);
});

test('a path the router refuses, with a large body, still gets its whole answer', async () => {
  // The router's refusals (over-long segment, malformed %-encoding) are answered before any hook runs.
  const body = Buffer.alloc(10_000_000, 'a');
  for (const path of [`/api/return_services/${key}/${'x'.repeat(3000)}`, `/api/return_services/${key}/%E0%A4%A-`]) {
    const a = await rawRequest(
      t.baseUrl,
      head('POST', path, { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(body.length), Connection: 'close' }),
      { body },
    );
    assertWholeError(a, 400, 'invalid_request');
  }
});

test("headers over Node's limit, with a large body behind them, still get the whole answer", async () => {
  // Node's parser refuses these before Fastify sees a request; the answer is written on the socket.
  const body = Buffer.alloc(10_000_000, 'a');
  const a = await rawRequest(
    t.baseUrl,
    head('POST', `/api/return_services/${key}/alice`, { 'X-Fill': 'y'.repeat(20_000), 'Content-Length': String(body.length), Connection: 'close' }),
    { body },
  );
  assertWholeError(a, 400, 'invalid_request');
});
