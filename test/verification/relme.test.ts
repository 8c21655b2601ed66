import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { checkRelMe, findRelMeLinks, normaliseProfileUrl } from '../../src/verification/relme.js';
import { safeFetch } from '../../src/verification/safe-fetch.js';
import { startServer } from './servers.js';
import type { LocalServer } from './servers.js';

const PROFILE = 'https://idsvc.example/u/bob';

describe('findRelMeLinks', () => {
  const base = 'https://social.example/@bob';

  test('<a rel="me"> and <link rel="me authn">, any case, in document order', () => {
    const html = `<html><head><link rel="me authn" href="https://one.example/"></head>
      <body><a rel="me" href="https://two.example/">2</a><A REL="ME" HREF="https://three.example/">3</A>
      <a rel="nofollow  me\tnoopener" href="https://four.example/">4</a></body></html>`;
    assert.deepEqual(findRelMeLinks(html, base), ['https://one.example/', 'https://two.example/', 'https://three.example/', 'https://four.example/']);
  });

  test('ignores other rels, other elements and links without href', () => {
    const html = `<a rel="nome" href="/a">x</a><a rel="mention" href="/b"></a><a rel="me-too" href="/c"></a>
      <span rel="me" href="/d"></span><area rel="me" href="/e"><a rel="me">no href</a><a href="/f">plain</a>`;
    assert.deepEqual(findRelMeLinks(html, base), []);
  });

  test('resolves relative URLs against the page URL', () => {
    assert.deepEqual(findRelMeLinks('<a rel=me href="/u/bob">', base), ['https://social.example/u/bob']);
    assert.deepEqual(findRelMeLinks('<a rel=me href="../x?y=1&amp;z=2">', 'https://h.example/a/b/c'), ['https://h.example/a/x?y=1&z=2']);
    assert.deepEqual(findRelMeLinks('<a rel=me href="//cdn.example/p">', base), ['https://cdn.example/p']);
  });

  test('the first <base href> applies, even to links before it', () => {
    const html = `<a rel="me" href="early">e</a><base href="https://elsewhere.example/dir/"><base href="https://ignored.example/">
      <a rel="me" href="u/bob">b</a>`;
    assert.deepEqual(findRelMeLinks(html, base), ['https://elsewhere.example/dir/early', 'https://elsewhere.example/dir/u/bob']);
  });

  test('a relative <base href> is resolved against the page URL', () => {
    assert.deepEqual(findRelMeLinks('<base href="/root/"><a rel=me href="x">', base), ['https://social.example/root/x']);
  });

  test('Link header entries with rel containing me, resolved against the page URL', () => {
    const header =
      '<https://a.example/>; rel="me", </relative>; rel="ME authn", <https://c.example/>; rel="author", <https://d.example/>; rel=me; anchor="https://other.example/"';
    assert.deepEqual(findRelMeLinks('', base, header), ['https://a.example/', 'https://social.example/relative']);
  });

  test('a malformed Link header is ignored, HTML links still count', () => {
    assert.deepEqual(findRelMeLinks('<a rel=me href="https://x.example/">', base, 'garbage without brackets'), ['https://x.example/']);
  });

  test('survives broken markup and removes duplicates', () => {
    const html = `<div><p><a rel=me href=https://x.example/a>unclosed <a rel='me' href="https://x.example/a"><link rel="me" href="https://y.example/"
      <a rel="me" href="http://[bad">`;
    const links = findRelMeLinks(html, base);
    assert.ok(links.includes('https://x.example/a'));
    assert.equal(links.filter((l) => l === 'https://x.example/a').length, 1);
  });
});

describe('normaliseProfileUrl', () => {
  test('lower-cases scheme and host, drops default port, trailing slash and fragment, keeps path case', () => {
    assert.equal(normaliseProfileUrl('HTTPS://IdSvc.Example:443/u/Bob/#top'), 'https://idsvc.example/u/Bob');
    assert.equal(normaliseProfileUrl('http://idsvc.example:80/u/bob'), 'http://idsvc.example/u/bob');
    assert.equal(normaliseProfileUrl('http://idsvc.example:8080/u/bob/'), 'http://idsvc.example:8080/u/bob');
    assert.equal(normaliseProfileUrl('https://idsvc.example/'), 'https://idsvc.example');
    assert.equal(normaliseProfileUrl('https://idsvc.example'), 'https://idsvc.example');
    assert.equal(normaliseProfileUrl('https://idsvc.example/u/bob?x=1'), 'https://idsvc.example/u/bob?x=1');
    assert.notEqual(normaliseProfileUrl('https://idsvc.example/U/bob'), normaliseProfileUrl('https://idsvc.example/u/bob'));
    assert.equal(normaliseProfileUrl('not a url'), 'not a url');
    assert.equal(normaliseProfileUrl('https://idsvc.example/u/bob///'), 'https://idsvc.example/u/bob');
    assert.equal(normaliseProfileUrl('https://idsvc.example//a//'), 'https://idsvc.example//a');
    assert.equal(normaliseProfileUrl('mailto:bob@idsvc.example#x#y'), 'mailto:bob@idsvc.example');
  });

  test('a path of 40,000 slashes that does not end in one costs linear time', () => {
    const url = `https://idsvc.example/${'/'.repeat(40_000)}x`;
    const before = process.cpuUsage();
    const out = normaliseProfileUrl(url);
    const used = process.cpuUsage(before);
    assert.equal(out, url);
    // Quadratic, this took seconds; linear, well under a millisecond.
    assert.ok(used.user + used.system < 200_000, `${(used.user + used.system) / 1000} ms of CPU`);
  });
});

describe('checkRelMe against a live local server', () => {
  let srv: LocalServer;
  const pages: Record<string, { status?: number; type?: string; link?: string; body: string }> = {
    '/a': { body: `<a rel="me" href="${PROFILE}">me</a>` },
    '/link': { body: `<head><link rel="me authn" href="${PROFILE}"></head>` },
    '/upper': { body: `<a rel="ME" href="${PROFILE}">me</a>` },
    '/base': { body: '<base href="https://idsvc.example/"><a rel="me" href="u/bob">me</a>' },
    '/header': { body: '<p>nothing here</p>', link: `<${PROFILE}>; rel="me"` },
    '/normalised': { body: '<a rel="me" href="HTTPS://IDSVC.Example:443/u/bob/">me</a>' },
    '/path-case': { body: '<a rel="me" href="https://idsvc.example/U/BOB">me</a>' },
    '/elsewhere': {
      body: ['a', 'b', 'c', 'd'].map((x) => `<a rel="me" href="https://${x}.example/">${x}</a>`).join(''),
    },
    '/none': { body: `<a href="${PROFILE}">not rel=me</a>` },
    '/plain': { type: 'text/plain', body: `<a rel="me" href="${PROFILE}">quoted</a>` },
    '/gone': { status: 404, body: `<a rel="me" href="${PROFILE}">me</a>` },
    '/error': { status: 500, body: 'oops' },
  };

  before(async () => {
    srv = await startServer((req: http.IncomingMessage, res: http.ServerResponse) => {
      const path = req.url ?? '/';
      if (path === '/moved') {
        res.writeHead(301, { location: '/dir/page' });
        res.end();
        return;
      }
      if (path === '/dir/page') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<a rel="me" href="../u/bob/">me</a>');
        return;
      }
      const page = pages[path];
      if (!page) {
        res.writeHead(404);
        res.end();
        return;
      }
      const headers: Record<string, string> = { 'content-type': page.type ?? 'text/html; charset=utf-8' };
      if (page.link) headers.link = page.link;
      res.writeHead(page.status ?? 200, headers);
      res.end(page.body);
    });
  });

  after(() => srv.close());

  const check = (path: string, profile = PROFILE) => checkRelMe(`${srv.origin}${path}`, profile, { allowPrivate: true });

  for (const path of ['/a', '/link', '/upper', '/base', '/header', '/normalised']) {
    test(`verified: ${path}`, async () => {
      const r = await check(path);
      assert.equal(r.outcome, 'verified', r.detail);
    });
  }

  test('verified: relative link on the page reached after a redirect', async () => {
    const r = await check('/moved', `${srv.origin}/u/bob`);
    assert.equal(r.outcome, 'verified', r.detail);
  });

  test('path case matters', async () => {
    assert.equal((await check('/path-case')).outcome, 'link_elsewhere');
  });

  test('link_elsewhere lists up to 3 targets', async () => {
    const r = await check('/elsewhere');
    assert.equal(r.outcome, 'link_elsewhere');
    assert.match(r.detail, /https:\/\/a\.example\/, https:\/\/b\.example\/, https:\/\/c\.example\//);
    assert.doesNotMatch(r.detail, /d\.example/);
    assert.match(r.detail, /1 more/);
  });

  test('no_link', async () => {
    assert.deepEqual(await check('/none'), { outcome: 'no_link', status: 200, detail: 'no rel="me" link found on the page' });
  });

  test('markup in a non-HTML page does not count', async () => {
    assert.equal((await check('/plain')).outcome, 'no_link');
  });

  test('404 is unreachable even with the link in the body', async () => {
    const r = await check('/gone');
    assert.deepEqual(r, { outcome: 'unreachable', reason: 'http_status', status: 404, detail: 'HTTP 404' });
  });

  test('500 is unreachable', async () => {
    assert.equal((await check('/error')).detail, 'HTTP 500');
  });

  test('a private address is unreachable without allowPrivate, and says why', async () => {
    const before = srv.connections;
    const r = await checkRelMe(`${srv.origin}/a`, PROFILE, { allowPrivate: false });
    assert.equal(r.outcome, 'unreachable');
    assert.equal(r.reason, 'port_not_allowed');
    const r2 = await checkRelMe('http://127.0.0.1/a', PROFILE, { allowPrivate: false });
    assert.deepEqual(r2, {
      outcome: 'unreachable',
      reason: 'address_not_allowed',
      detail: 'the address resolves to a private network',
    });
    assert.equal(srv.connections, before);
  });

  test('fetchImpl receives the allowPrivate setting', async () => {
    const seen: boolean[] = [];
    const r = await checkRelMe(`${srv.origin}/a`, PROFILE, {
      allowPrivate: true,
      fetchImpl: (url, opts) => {
        seen.push(opts.allowPrivate);
        return safeFetch(url, opts);
      },
    });
    assert.equal(r.outcome, 'verified');
    assert.deepEqual(seen, [true]);
  });
});
