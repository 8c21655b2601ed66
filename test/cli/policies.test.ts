// Operator commands apply the same policies as the site and delivery (issue 14.7, 14.9, 14.10):
// webhook URLs must pass the outbound address policy when they are set, `user create` refuses
// guessable passwords, and discoverability is off unless the operator says otherwise.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { findUserByUserId } from '../../src/repositories/users.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const cli = (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) => runCli(t, args, options);

const partnerCount = async () => (await t.ctx.db.kysely.selectFrom('partners').select('id').execute()).length;

// [URL, what the refusal says about it]
const REFUSED: [string, RegExp][] = [
  ['http://169.254.169.254/latest/meta-data/iam/', /169\.254\.169\.254 is a link-local address/],
  ['http://127.0.0.1/hook', /127\.0\.0\.1 is a loopback address/],
  ['http://0x7f.1/hook', /127\.0\.0\.1 is a loopback address/],
  ['http://localhost/hook', /localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/],
  ['https://10.20.30.40/hook', /10\.20\.30\.40 is a private network address/],
  ['https://192.168.1.7/hook', /192\.168\.1\.7 is a private network address/],
  ['https://[::ffff:169.254.169.254]/hook', /::ffff:a9fe:a9fe is the IPv4-mapped IPv6 form of a link-local address/],
  ['https://[::ffff:10.0.0.1]/hook', /is the IPv4-mapped IPv6 form of a private network address/],
  ['http://[::1]/hook', /::1 is a loopback address/],
  ['https://[fd12:3456::1]/hook', /is a unique local \(private network\) address/],
  ['https://93.184.215.14:8443/hook', /port 8443 is not allowed, only 80 and 443/],
];

test('partner create --webhook refuses every address delivery would refuse, naming the policy and the way out', async () => {
  const before = await partnerCount();
  for (const [url, why] of REFUSED) {
    const r = await cli(['partner', 'create', '--name', 'ssrf', '--webhook', url]);
    assert.equal(r.code, 1, `${url} was accepted`);
    assert.match(r.stderr, /--webhook refused by the outbound address policy/, url);
    assert.match(r.stderr, why, url);
    assert.match(r.stderr, /FETCH_ALLOW_PRIVATE=1/, url);
    assert.doesNotMatch(r.stderr, /meta-data|\/hook/, 'the error names the host, never the path');
  }
  assert.equal(await partnerCount(), before, 'no partner was created');
  const unresolvable = await cli(['partner', 'create', '--name', 'typo', '--webhook', 'https://no-such-host.invalid/hook']);
  assert.equal(unresolvable.code, 1);
  assert.match(unresolvable.stderr, /could not resolve no-such-host\.invalid/);
});

test('partner set --webhook refuses them too and keeps the endpoint it had; public addresses pass', async () => {
  const created = await cli(['--json', 'partner', 'create', '--name', 'hooks', '--webhook', 'https://93.184.215.14/idsvc-events']);
  assert.equal(created.code, 0, created.stderr);
  const { api_key } = JSON.parse(created.stdout) as { api_key: string };
  for (const url of ['http://169.254.169.254/', 'https://[::ffff:127.0.0.1]/hook', 'http://localhost:8080/hook']) {
    const r = await cli(['partner', 'set', api_key, '--webhook', url]);
    assert.equal(r.code, 1, url);
    assert.match(r.stderr, /refused by the outbound address policy/);
  }
  const shown = JSON.parse((await cli(['--json', 'partner', 'show', api_key])).stdout) as { webhook_url: string };
  assert.equal(shown.webhook_url, 'https://93.184.215.14/idsvc-events');
  assert.equal((await cli(['partner', 'set', api_key, '--webhook', 'none'])).code, 0);
});

test('FETCH_ALLOW_PRIVATE=1 lets a webhook point at loopback and private addresses, as delivery then does', async () => {
  const env = { FETCH_ALLOW_PRIVATE: '1' };
  const r = await cli(['--json', 'partner', 'create', '--name', 'lab', '--webhook', 'http://127.0.0.1:9999/hook'], { env });
  assert.equal(r.code, 0, r.stderr);
  const { api_key } = JSON.parse(r.stdout) as { api_key: string };
  assert.equal((await cli(['partner', 'set', api_key, '--webhook', 'http://10.0.0.8:8080/hook'], { env })).code, 0);
  assert.equal(JSON.parse((await cli(['--json', 'partner', 'show', api_key])).stdout).webhook_url, 'http://10.0.0.8:8080/hook');
});

test('user create refuses guessable passwords, saying why and how to fix, before anything is stored', async () => {
  for (const [password, why] of [
    ['aaaaaaaa', /Repeated characters like "aaa" are easy to guess\. .*Avoid repeated words and characters\./],
    ['Welcome1!', /similar to a commonly used password\. Add more words that are less common\./],
    ['alicealice', /Repeated character patterns like "abcabcabc" are easy to guess\./],
    ['alice.cooper7', /There should not be any personal or page related data\./],
  ] as const) {
    const r = await cli(['user', 'create', '--email', 'alice.cooper@example.org', '--user-id', 'alice'], { stdin: `${password}\n` });
    assert.equal(r.code, 1, password);
    assert.match(r.stderr, /password is too easy to guess\./, password);
    assert.match(r.stderr, why, password);
  }
  assert.equal(await t.ctx.db.kysely.selectFrom('users').select('id').where('user_id', '=', 'alice').executeTakeFirst(), undefined);
});

test('user create makes accounts not discoverable unless --discoverable; user set --discoverable takes on or off only', async () => {
  const plain = await cli(['--json', 'user', 'create', '--email', 'vic@example.org', '--user-id', 'vic', '--opt-in'], { stdin: 'walnut harbour saxophone\n' });
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(JSON.parse(plain.stdout).discoverable, false);
  const chosen = await cli(['--json', 'user', 'create', '--email', 'wes@example.org', '--user-id', 'wes', '--opt-in', '--discoverable'], {
    stdin: 'walnut harbour saxophone\n',
  });
  assert.equal(chosen.code, 0, chosen.stderr);
  assert.equal(JSON.parse(chosen.stdout).discoverable, true);

  const P = await t.partner();
  // Each claims a GitHub name, as the site's account page would add it.
  const github = (await t.ctx.catalogue.get()).byId.get('github')!;
  for (const who of ['vic', 'wes']) {
    const user = (await findUserByUserId(t.ctx.db, who))!;
    await t.ctx.db.write((tx) => setCentralIdentity(tx, user, github, `${who}-gh`, { partnerId: null }, t.clock.now()));
  }
  const found = async (svc: string) => (await P.publicClient.reverseLookup('github', svc)).map((u) => u.userId);
  assert.deepEqual(await found('vic-gh'), []);
  assert.deepEqual(await found('wes-gh'), ['wes']);

  const typo = await cli(['user', 'set', 'wes', '--discoverable', 'yes']);
  assert.equal(typo.code, 1);
  assert.match(typo.stderr, /--discoverable takes on or off/);
  assert.deepEqual(await found('wes-gh'), ['wes'], 'a typo changes nothing');
  assert.equal((await cli(['user', 'set', 'wes', '--discoverable', 'off'])).code, 0);
  assert.deepEqual(await found('wes-gh'), []);
  assert.equal((await cli(['user', 'set', 'vic', '--discoverable', 'on'])).code, 0);
  assert.deepEqual(await found('vic-gh'), ['vic']);
});
