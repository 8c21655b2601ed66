import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadCatalogueFile } from '../../src/catalogue/catalogue-file.js';
import { buildProfileUrl, matchesPattern, websiteRootHost } from '../../src/catalogue/profile-url.js';

const template = (svcLeftURL: string, svcRightURL = '', urlBuilder: string | null = null) => ({
  svcLeftURL,
  svcRightURL,
  urlBuilder,
});
const github = template('https://www.github.com/');
const medium = template('https://medium.com/@');
const arduino = template('https://forum.arduino.cc/u/', '/summary');
const hackerNews = template('https://news.ycombinator.com/user?id=');
const tumblr = template('https://', '.tumblr.com/');
const mastodon = template('', '', 'mastodon');
const website = template('', '', 'website');

test('path templates keep readable identifiers readable', () => {
  assert.equal(buildProfileUrl(github, 'neilsimon'), 'https://www.github.com/neilsimon');
  assert.equal(buildProfileUrl(github, 'neil.simon'), 'https://www.github.com/neil.simon');
  assert.equal(buildProfileUrl(github, '@neil'), 'https://www.github.com/@neil');
  assert.equal(buildProfileUrl(github, 'neil+x'), 'https://www.github.com/neil+x');
  assert.equal(buildProfileUrl(github, 'neil_s-1~'), 'https://www.github.com/neil_s-1~');
  assert.equal(buildProfileUrl(arduino, 'neil:s'), 'https://forum.arduino.cc/u/neil:s/summary');
});

test('path templates escape what would leave the path segment', () => {
  assert.equal(buildProfileUrl(github, 'a/b?c#d'), 'https://www.github.com/a%2Fb%3Fc%23d');
  assert.equal(buildProfileUrl(github, 'a\\b%20'), 'https://www.github.com/a%5Cb%2520');
  assert.equal(buildProfileUrl(github, 'neil simon'), 'https://www.github.com/neil%20simon');
  assert.equal(buildProfileUrl(github, 'zoë'), 'https://www.github.com/zo%C3%AB');
  assert.equal(buildProfileUrl(arduino, '../admin'), 'https://forum.arduino.cc/u/..%2Fadmin/summary');
  assert.equal(buildProfileUrl(github, '..'), '');
  assert.equal(buildProfileUrl(github, '.'), '');
  assert.equal(buildProfileUrl(github, ''), '');
  assert.equal(buildProfileUrl(github, '\uD800'), '', 'a lone surrogate cannot be encoded');
});

test('a template ending in @ does not double a leading @', () => {
  assert.equal(buildProfileUrl(medium, '@neil'), 'https://medium.com/@neil');
  assert.equal(buildProfileUrl(medium, 'neil'), 'https://medium.com/@neil');
  assert.equal(buildProfileUrl(medium, '@'), '');
});

test('query templates escape + and separators', () => {
  assert.equal(buildProfileUrl(hackerNews, 'neil+x'), 'https://news.ycombinator.com/user?id=neil%2Bx');
  assert.equal(buildProfileUrl(hackerNews, 'a&b=c'), 'https://news.ycombinator.com/user?id=a%26b%3Dc');
  assert.equal(buildProfileUrl(hackerNews, '@neil'), 'https://news.ycombinator.com/user?id=@neil');
});

test('host templates accept only host-name labels', () => {
  assert.equal(buildProfileUrl(tumblr, 'neil'), 'https://neil.tumblr.com/');
  assert.equal(buildProfileUrl(tumblr, 'neil-s_1'), 'https://neil-s_1.tumblr.com/');
  assert.equal(buildProfileUrl(tumblr, 'neil.simon'), 'https://neil.simon.tumblr.com/');
  for (const id of ['@neil', 'neil+x', 'evil.com/', 'evil.com#', 'a@evil.com', 'a b', '.neil', 'neil.', 'a..b']) {
    assert.equal(buildProfileUrl(tumblr, id), '', id);
  }
});

test('the mastodon builder turns a handle into the instance profile URL', () => {
  assert.equal(buildProfileUrl(mastodon, 'neil@mastodon.social'), 'https://mastodon.social/@neil');
  assert.equal(buildProfileUrl(mastodon, '@neil@mastodon.social'), 'https://mastodon.social/@neil');
  assert.equal(buildProfileUrl(mastodon, '@Neil_S@Social.Example.co.uk'), 'https://social.example.co.uk/@Neil_S');
  for (const id of ['neil', '@neil', 'neil@', 'neil@localhost', 'neil@host/x', 'a@b@c.com', 'ne il@x.org', 'neil@x.org:8080', 'neil@a..org']) {
    assert.equal(buildProfileUrl(mastodon, id), '', id);
  }
});

test('the website builder takes an https URL or a bare domain and path, normalised', () => {
  const cases: [string, string][] = [
    ['example.com', 'https://example.com/'],
    ['  https://Alice.GitHub.io/blog/  ', 'https://alice.github.io/blog/'],
    ['https://example.com/~alice', 'https://example.com/~alice'],
    ['example.com/~alice#about', 'https://example.com/~alice'],
    ['HTTPS://example.com/a b', 'https://example.com/a%20b'],
    ['https://example.com/blog?lang=en', 'https://example.com/blog?lang=en'],
    ['https://bücher.example/', 'https://xn--bcher-kva.example/'],
    ['https://example.com:443/', 'https://example.com/'],
    ['https://example.com\\evil.example', 'https://example.com/evil.example'],
  ];
  for (const [id, url] of cases) {
    assert.equal(buildProfileUrl(website, id), url, id);
    // What it builds builds itself again: an identifier stored as the address stays that address.
    assert.equal(buildProfileUrl(website, url), url, url);
  }
});

test('the website builder refuses what is not an https address of a named host', () => {
  for (const id of [
    '',
    'alice',
    'http://example.com/',
    'ftp://example.com/',
    'javascript:alert(1)',
    'data:text/html,x',
    '//example.com/',
    '\\\\example.com',
    'https://user:pw@example.com/',
    'https://user@example.com/',
    'alice@example.com',
    'https://example.com:8443/',
    'example.com:8443',
    'https://127.0.0.1/',
    'https://127.1/',
    'https://0x7f.0.0.1/',
    'https://[::1]/',
    'https://localhost/',
    'https://-bad.example/',
    'https://a..b/',
    'https://exa_mple.com/',
    `https://example.com/${'a'.repeat(240)}`,
    `${'a'.repeat(64)}.example`,
    'https://example.com/\u0000',
    'https://example.com/a\tb',
    'example.com.',
  ]) {
    assert.equal(buildProfileUrl(website, id), '', id);
  }
});

test('the website builder answers at once on the worst inputs', () => {
  for (const id of ['a.'.repeat(127), '.'.repeat(255), `https://${'a-'.repeat(120)}.example`, `https://${'%'.repeat(240)}`, 'a'.repeat(100_000)]) {
    const started = process.hrtime.bigint();
    buildProfileUrl(website, id);
    websiteRootHost(id);
    // A wide margin: a linear pass over 255 characters takes microseconds even on a busy machine.
    assert.ok(process.hrtime.bigint() - started < 1_000_000_000n, id.slice(0, 20));
  }
});

test('websiteRootHost names the host only when the address is its root', () => {
  assert.equal(websiteRootHost('example.com'), 'example.com');
  assert.equal(websiteRootHost('https://Alice.Example/'), 'alice.example');
  assert.equal(websiteRootHost('https://alice.example/#top'), 'alice.example');
  assert.equal(websiteRootHost('https://alice.github.io/blog/'), null);
  assert.equal(websiteRootHost('https://example.com/~alice'), null);
  assert.equal(websiteRootHost('https://example.com/?u=alice'), null);
  assert.equal(websiteRootHost('http://example.com/'), null);
});

test('unknown builders and entries without a template build nothing', () => {
  assert.equal(buildProfileUrl(template('', '', 'bluesky'), 'neil'), '');
  assert.equal(buildProfileUrl(template(''), 'neil'), '');
  assert.equal(buildProfileUrl(template('javascript:alert('), 'neil'), '');
});

test('every shipped entry builds an http(s) URL for a plain identifier', () => {
  for (const entry of loadCatalogueFile()) {
    const id = entry.urlBuilder === 'mastodon' ? 'neil@mastodon.social' : entry.urlBuilder === 'website' ? 'neil.example' : 'neil';
    const url = buildProfileUrl(entry, id);
    assert.match(url, /^https?:\/\//, entry.svcId);
    if (entry.urlBuilder === null) assert.equal(url, `${entry.svcLeftURL}neil${entry.svcRightURL}`);
  }
});

test('matchesPattern', () => {
  const githubPattern = '^[a-zA-Z0-9](?:[a-zA-Z0-9]|-(?=[a-zA-Z0-9])){0,38}$';
  assert.equal(matchesPattern(null, 'anything at all'), true);
  assert.equal(matchesPattern(githubPattern, 'neil-simon'), true);
  assert.equal(matchesPattern(githubPattern, 'neil--simon'), false);
  assert.equal(matchesPattern(githubPattern, 'neil.simon'), false);
  assert.equal(matchesPattern('[a-zA-Z0-9]{3,15}', '!!abc!!'), true, 'unanchored patterns search, as in Sherlock');
  assert.equal(matchesPattern('^[a-zA-Z0-9-_]{1,30}$', 'neil_s-1'), true, 'compiled without the u flag');
  assert.equal(matchesPattern('([a-z', 'neil'), true, 'a broken pattern blocks nobody');
  const mastodonPattern = loadCatalogueFile().find((e) => e.svcId === 'mastodon')!.regexCheck;
  assert.equal(matchesPattern(mastodonPattern, '@neil@mastodon.social'), true);
  assert.equal(matchesPattern(mastodonPattern, 'neil'), false);
});

test('a template that is not an http(s) URL gives "" for every identifier, and a changed template is seen', () => {
  for (const t of [template('javascript:alert(1)//'), template('ftp://files.example/'), template('https://exa mple.com/'), template('https://[bad/')]) {
    for (const id of ['neil', 'a', '@x']) assert.equal(buildProfileUrl(t, id), '', `${t.svcLeftURL} ${id}`);
  }
  // The same object, reused with another template (what is worked out per template is not stale).
  const t = template('https://www.github.com/');
  assert.equal(buildProfileUrl(t, 'neil'), 'https://www.github.com/neil');
  t.svcLeftURL = 'ftp://www.github.com/';
  assert.equal(buildProfileUrl(t, 'neil'), '');
  t.svcLeftURL = 'https://news.ycombinator.com/user?id=';
  assert.equal(buildProfileUrl(t, 'neil+x'), 'https://news.ycombinator.com/user?id=neil%2Bx');
});

test('every URL built from the shipped catalogue parses as http(s) and keeps its template, whatever the identifier', () => {
  // Deterministic pseudo-random identifiers over the characters that matter to URL parsing.
  const alphabet = [
    'a',
    'Z',
    '0',
    '.',
    '-',
    '_',
    '~',
    '@',
    ':',
    '+',
    '/',
    '?',
    '#',
    '%',
    '\\',
    ' ',
    '&',
    '=',
    '[',
    ']',
    'é',
    '日',
    '\uD83D\uDE00',
    'x',
    'n',
    '-',
    '.',
  ];
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const ids = ['xn--zz', 'xn--', 'a..b', '%2e%2e', '.%2e'];
  for (let i = 0; i < 300; i++) {
    let id = '';
    for (let n = 1 + (next() % 12); n > 0; n--) id += alphabet[next() % alphabet.length];
    ids.push(id);
  }
  let built = 0;
  for (const entry of loadCatalogueFile()) {
    for (const id of ids) {
      const url = buildProfileUrl(entry, id);
      if (url === '') continue;
      built++;
      const parsed = new URL(url);
      assert.ok(parsed.protocol === 'http:' || parsed.protocol === 'https:', url);
      if (entry.urlBuilder === null) assert.ok(url.startsWith(entry.svcLeftURL) && url.endsWith(entry.svcRightURL), url);
    }
  }
  assert.ok(built > 1000, `only ${built} URLs built`);
});
