// The client's error codes are the server's: the same list (checked here at run time and, through
// the two types, by the type check), and a code the client does not know (a newer server's) is
// reported as internal_error with the server's message, never passed on as a code it cannot name.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ERROR_CODES, IdsvcClient, IdsvcError, type ErrorCode as ClientErrorCode } from '@idsvc/client';
import { STATUS_OF, type ErrorCode as ServerErrorCode } from '../../src/domain/errors.js';

// Each type assignable to the other: a code added to either list alone fails the type check here.
const serverCodesAreClientCodes = (code: ServerErrorCode): ClientErrorCode => code;
const clientCodesAreServerCodes = (code: ClientErrorCode): ServerErrorCode => code;

test("the client lists exactly the server's error codes", () => {
  assert.deepEqual([...ERROR_CODES].sort(), Object.keys(STATUS_OF).sort());
  for (const code of ERROR_CODES) assert.equal(serverCodesAreClientCodes(clientCodesAreServerCodes(code)), code);
});

/** A server on loopback answering every call with one error, in the API's JSON shape. */
let server: http.Server;
let answer: { status: number; code: string; retryAfter?: string } = { status: 503, code: 'unavailable', retryAfter: '5' };
before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.retryAfter ? { 'retry-after': answer.retryAfter } : {}) });
    res.end(JSON.stringify({ error: { code: answer.code, message: `said ${answer.code}` } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function thrown(): Promise<IdsvcError> {
  const client = new IdsvcClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'k'.repeat(32), apiToken: 't' });
  const e = await client.returnServices('alice').then(
    () => assert.fail('an error was expected'),
    (err: unknown) => err,
  );
  assert.ok(e instanceof IdsvcError);
  return e;
}

test('unavailable reaches the caller as its own code, with its Retry-After', async () => {
  answer = { status: 503, code: 'unavailable', retryAfter: '5' };
  const e = await thrown();
  assert.deepEqual([e.code, e.status, e.retryAfter, e.message], ['unavailable', 503, 5, 'said unavailable']);
});

test("a code the client does not know is internal_error, with the server's status and message", async () => {
  answer = { status: 418, code: 'a_newer_code' };
  const e = await thrown();
  assert.deepEqual([e.code, e.status, e.message], ['internal_error', 418, 'said a_newer_code']);
});
