import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { safeFetch } from '../../src/verification/safe-fetch.js';
import type { SafeFetchResult } from '../../src/verification/safe-fetch.js';
import { startServer, unusedPort } from './servers.js';
import type { LocalServer } from './servers.js';

function failure(r: SafeFetchResult): { reason: string; detail: string } {
  assert.equal(r.ok, false, `expected a failure, got ${JSON.stringify(r).slice(0, 200)}`);
  return r.ok ? { reason: '', detail: '' } : r;
}

function success(r: SafeFetchResult) {
  if (!r.ok) assert.fail(`expected success, got ${r.reason}: ${r.detail}`);
  return r;
}

describe('refused before any connection (default policy)', () => {
  // Nothing listens on port 80 here: had the fetcher tried, the answer would be connect_failed
  // (or a timeout), never address_not_allowed.
  const addressCases = [
    'http://127.0.0.1/',
    'https://127.0.0.1/',
    'http://[::1]/',
    'http://10.0.0.1/',
    'http://172.16.0.1/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a00:1]/',
    'http://[fd00::1]/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://0x7f.0.0.1/',
    'http://127.1/',
    'http://localhost/',
    'http://LocalHost/',
  ];
  for (const url of addressCases) {
    test(url, async () => {
      const r = failure(await safeFetch(url, { allowPrivate: false, timeoutMs: 2000 }));
      assert.equal(r.reason, 'address_not_allowed', r.detail);
    });
  }

  test('the WHATWG parser normalises numeric IPv4 forms before the check', async () => {
    assert.equal(new URL('http://2130706433/').hostname, '127.0.0.1');
    assert.equal(new URL('http://0x7f.1/').hostname, '127.0.0.1');
    const r = failure(await safeFetch('http://2130706433/', { allowPrivate: false }));
    assert.match(r.detail, /127\.0\.0\.1 is a loopback address/);
  });

  test('a name resolving to loopback is explained', async () => {
    const r = failure(await safeFetch('http://localhost/', { allowPrivate: false }));
    assert.match(r.detail, /^localhost resolves to .*loopback/);
  });

  for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,hi', 'gopher://example.com/']) {
    test(`scheme ${url}`, async () => {
      assert.equal(failure(await safeFetch(url, { allowPrivate: false })).reason, 'scheme_not_allowed');
    });
  }

  for (const url of ['not a url', '/relative/path', 'http://', 'http://exa mple.com/']) {
    test(`invalid ${JSON.stringify(url)}`, async () => {
      assert.equal(failure(await safeFetch(url, { allowPrivate: false })).reason, 'invalid_url');
    });
  }

  test('a name that does not resolve', async () => {
    const r = failure(await safeFetch('http://does-not-exist.invalid/', { allowPrivate: false, timeoutMs: 5000 }));
    assert.equal(r.reason, 'dns_failed');
  });
});

describe('against a live local server', () => {
  let srv: LocalServer;
  let other: LocalServer; // on 127.0.0.2: a second address the tests' policy can refuse
  const seenHeaders: Record<string, Record<string, string | string[] | undefined>> = {};

  before(async () => {
    srv = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      seenHeaders[url.pathname] = req.headers;
      const hop = /^\/hop\/(\d+)$/.exec(url.pathname);
      if (hop) {
        const n = Number(hop[1]);
        if (n === 0) {
          res.end('arrived');
        } else {
          res.writeHead(302, { location: `/hop/${n - 1}` });
          res.end();
        }
        return;
      }
      switch (url.pathname) {
        case '/hello':
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'X-Custom': 'Yes' });
          res.end(`hello ${req.headers.host}`);
          return;
        case '/echo': {
          let body = '';
          req.setEncoding('utf8');
          req.on('data', (c: string) => (body += c));
          req.on('end', () => res.end(`${req.method} ${body}`));
          return;
        }
        case '/to-other':
          res.writeHead(301, { location: `${other.origin}/hello` });
          res.end();
          return;
        case '/to-ftp':
          res.writeHead(302, { location: 'ftp://example.com/' });
          res.end();
          return;
        case '/to-name':
          res.writeHead(307, { location: 'http://internal.test/' });
          res.end();
          return;
        case '/big':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('a'.repeat(2 * 1024 * 1024));
          return;
        case '/exact':
          res.end('b'.repeat(1000));
          return;
        case '/utf8':
          res.end('é'.repeat(10)); // 2 bytes each
          return;
        case '/trickle': {
          res.writeHead(200, { 'content-type': 'text/html' });
          const t = setInterval(() => res.write('x'), 200);
          res.on('close', () => clearInterval(t));
          return;
        }
        case '/silent':
          return; // never answers
        default:
          res.writeHead(404);
          res.end('not found');
      }
    });
    other = await startServer((req, res) => {
      seenHeaders[`other${req.url}`] = req.headers;
      res.end('other');
    }, '127.0.0.2');
  });

  after(async () => {
    await srv.close();
    await other.close();
  });

  test('ports other than 80/443 are refused without connecting', async () => {
    const before = srv.connections;
    for (const host of ['127.0.0.1', 'localhost']) {
      const r = failure(await safeFetch(`http://${host}:${srv.port}/hello`, { allowPrivate: false }));
      assert.equal(r.reason, 'port_not_allowed');
    }
    assert.equal(srv.connections, before);
  });

  test('the address policy runs before connecting, even with a listener there', async () => {
    const before = srv.connections;
    const r = failure(await safeFetch(`${srv.origin}/hello`, { allowPrivate: true, isAllowed: () => false }));
    assert.equal(r.reason, 'address_not_allowed');
    assert.equal(srv.connections, before);
  });

  test('allowPrivate lifts the address and port restrictions', async () => {
    const r = success(await safeFetch(`${srv.origin}/hello#frag`, { allowPrivate: true }));
    assert.equal(r.status, 200);
    assert.equal(r.body, `hello 127.0.0.1:${srv.port}`);
    assert.equal(r.headers['x-custom'], 'Yes');
    assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(r.truncated, false);
    assert.equal(r.redirects, 0);
    assert.equal(new URL(r.finalUrl).pathname, '/hello');
  });

  test('non-2xx answers are returned, not treated as failures', async () => {
    const r = success(await safeFetch(`${srv.origin}/missing`, { allowPrivate: true }));
    assert.equal(r.status, 404);
    assert.equal(r.body, 'not found');
  });

  test('sends a User-Agent, overridable', async () => {
    success(await safeFetch(`${srv.origin}/hello`, { allowPrivate: true }));
    assert.match(String(seenHeaders['/hello']?.['user-agent']), /^idsvc\//);
    success(await safeFetch(`${srv.origin}/hello`, { allowPrivate: true, userAgent: 'custom/1' }));
    assert.equal(seenHeaders['/hello']?.['user-agent'], 'custom/1');
  });

  test('connects to the checked address, keeping the name in Host (no second lookup)', async () => {
    let lookups = 0;
    const r = success(
      await safeFetch(`http://pinned.test:${srv.port}/hello`, {
        allowPrivate: true,
        resolveHost: async (name) => {
          lookups += 1;
          assert.equal(name, 'pinned.test');
          return [{ address: '127.0.0.1', family: 4 }];
        },
      }),
    );
    // pinned.test has no DNS record: reaching the server at all means the socket used our answer.
    assert.equal(r.body, `hello pinned.test:${srv.port}`);
    assert.equal(lookups, 1);
  });

  test('every resolved address is checked, not just the first', async () => {
    const before = srv.connections;
    const r = failure(
      await safeFetch(`http://multi.test:${srv.port}/hello`, {
        allowPrivate: true,
        isAllowed: (ip) => ip === '127.0.0.1',
        resolveHost: async () => [
          { address: '127.0.0.1', family: 4 },
          { address: '127.0.0.2', family: 4 },
        ],
      }),
    );
    assert.equal(r.reason, 'address_not_allowed');
    assert.match(r.detail, /127\.0\.0\.2/);
    assert.equal(srv.connections, before);
  });

  test('a redirect to a refused address is not followed', async () => {
    const before = other.connections;
    const r = failure(await safeFetch(`${srv.origin}/to-other`, { allowPrivate: true, isAllowed: (ip) => ip === '127.0.0.1' }));
    assert.equal(r.reason, 'address_not_allowed');
    assert.equal(other.connections, before);
  });

  test('the same redirect is followed when the policy allows both (control)', async () => {
    const r = success(await safeFetch(`${srv.origin}/to-other`, { allowPrivate: true }));
    assert.equal(r.body, 'other');
    assert.equal(r.redirects, 1);
    assert.equal(r.finalUrl, `${other.origin}/hello`);
  });

  test('credentials are not forwarded to another origin', async () => {
    success(
      await safeFetch(`${srv.origin}/to-other`, {
        allowPrivate: true,
        headers: { Authorization: 'Bearer secret', 'X-Other': 'kept' },
      }),
    );
    assert.equal(seenHeaders['/to-other']?.authorization, 'Bearer secret');
    assert.equal(seenHeaders['other/hello']?.authorization, undefined);
    assert.equal(seenHeaders['other/hello']?.['x-other'], 'kept');
  });

  test('scheme and address are re-checked on every hop', async () => {
    assert.equal(failure(await safeFetch(`${srv.origin}/to-ftp`, { allowPrivate: true })).reason, 'scheme_not_allowed');
    const resolved: string[] = [];
    const r = failure(
      await safeFetch(`${srv.origin}/to-name`, {
        allowPrivate: true,
        isAllowed: (ip) => ip === '127.0.0.1',
        resolveHost: async (name) => {
          resolved.push(name);
          return [{ address: '10.0.0.1', family: 4 }];
        },
      }),
    );
    assert.equal(r.reason, 'address_not_allowed');
    assert.equal(r.detail, 'internal.test resolves to 10.0.0.1, which is a private network address');
    assert.deepEqual(resolved, ['internal.test']);
  });

  test('3 redirects are followed, the 4th is refused', async () => {
    const ok = success(await safeFetch(`${srv.origin}/hop/3`, { allowPrivate: true }));
    assert.equal(ok.body, 'arrived');
    assert.equal(ok.redirects, 3);
    assert.equal(ok.finalUrl, `${srv.origin}/hop/0`);

    const start = srv.requests.length;
    const r = failure(await safeFetch(`${srv.origin}/hop/4`, { allowPrivate: true }));
    assert.equal(r.reason, 'too_many_redirects');
    assert.deepEqual(srv.requests.slice(start), ['/hop/4', '/hop/3', '/hop/2', '/hop/1']);
  });

  test('maxRedirects is configurable, and POST follows none by default', async () => {
    assert.equal(failure(await safeFetch(`${srv.origin}/hop/1`, { allowPrivate: true, maxRedirects: 0 })).reason, 'too_many_redirects');
    assert.equal(success(await safeFetch(`${srv.origin}/hop/5`, { allowPrivate: true, maxRedirects: 5 })).redirects, 5);
    const r = failure(await safeFetch(`${srv.origin}/hop/1`, { allowPrivate: true, method: 'POST', body: '{}' }));
    assert.equal(r.reason, 'too_many_redirects');
  });

  test('POST sends the body and headers', async () => {
    const r = success(
      await safeFetch(`${srv.origin}/echo`, {
        allowPrivate: true,
        method: 'POST',
        body: '{"a":1}',
        headers: { 'Content-Type': 'application/json', 'webhook-id': 'msg_1' },
      }),
    );
    assert.equal(r.body, 'POST {"a":1}');
    assert.equal(seenHeaders['/echo']?.['content-type'], 'application/json');
    assert.equal(seenHeaders['/echo']?.['webhook-id'], 'msg_1');
  });

  test('a body over 1 MiB is cut at exactly 1 MiB', async () => {
    const r = success(await safeFetch(`${srv.origin}/big`, { allowPrivate: true }));
    assert.equal(r.truncated, true);
    assert.equal(r.body.length, 1024 * 1024);
    assert.equal(Buffer.byteLength(r.body), 1024 * 1024);
  });

  test('maxBytes is honoured exactly; a body of exactly maxBytes is not truncated', async () => {
    const cut = success(await safeFetch(`${srv.origin}/exact`, { allowPrivate: true, maxBytes: 999 }));
    assert.equal(cut.truncated, true);
    assert.equal(cut.body.length, 999);
    const whole = success(await safeFetch(`${srv.origin}/exact`, { allowPrivate: true, maxBytes: 1000 }));
    assert.equal(whole.truncated, false);
    assert.equal(whole.body.length, 1000);
  });

  test('a cut through a multi-byte character drops the fragment', async () => {
    const r = success(await safeFetch(`${srv.origin}/utf8`, { allowPrivate: true, maxBytes: 5 }));
    assert.equal(r.body, 'éé');
    assert.equal(r.truncated, true);
  });

  test('a server trickling bytes is cut off by the overall deadline', async () => {
    const r = failure(await safeFetch(`${srv.origin}/trickle`, { allowPrivate: true, timeoutMs: 1000 }));
    assert.equal(r.reason, 'timeout');
  });

  test('a server that never answers times out', async () => {
    const r = failure(await safeFetch(`${srv.origin}/silent`, { allowPrivate: true, timeoutMs: 500 }));
    assert.equal(r.reason, 'timeout');
  });

  test('nothing listening gives connect_failed', async () => {
    const port = await unusedPort();
    const r = failure(await safeFetch(`http://127.0.0.1:${port}/`, { allowPrivate: true }));
    assert.equal(r.reason, 'connect_failed');
  });
});

test('a response that is not HTTP gives http_error', async () => {
  const garbage = net.createServer((sock) => {
    sock.on('data', () => sock.end('this is not http\r\n\r\n'));
  });
  await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', () => resolve()));
  try {
    const { port } = garbage.address() as AddressInfo;
    const r = failure(await safeFetch(`http://127.0.0.1:${port}/`, { allowPrivate: true, timeoutMs: 3000 }));
    assert.equal(r.reason, 'http_error');
  } finally {
    await new Promise<void>((resolve) => garbage.close(() => resolve()));
  }
});
