// `idsvc catalogue coverage`: of the most popular enabled services (opted-in users, ties by name),
// which a person can verify on their own and by which methods, as the checkers say.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { findUserByUserId } from '../../src/repositories/users.js';
import { setCentralIdentity } from '../../src/services/central.js';
import { verificationCoverage } from '../../src/verification/coverage.js';
import { VERIFICATION_METHODS } from '../../src/verification/methods.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
  // Popularity is people: two opted-in accounts make these the most popular, in this order.
  const counts: [string, string, number][] = [
    ['9gag', 'someone', 2],
    ['github', 'octocat', 2],
    ['hackernews', 'pg', 1],
    ['bluesky', 'alice', 1],
  ];
  for (let i = 1; i <= 2; i++) {
    const u = await t.user({ email: `popular.${i}@example.org`, userId: `popular_${i}`, optedIn: true });
    const user = (await findUserByUserId(t.ctx.db, u.userId))!;
    const snap = await t.ctx.catalogue.get();
    for (const [svcId, usrSvcId, n] of counts) {
      if (i > n) continue;
      await t.ctx.db.write((tx) => setCentralIdentity(tx, user, snap.byId.get(svcId)!, usrSvcId, { partnerId: null }, t.clock.now()));
    }
  }
});
after(() => t.close());

interface Coverage {
  top: number;
  verifiable: number;
  services: { svcId: string; methods: string[] }[];
}

test('--json prints the 50 most popular services with the methods that can verify each', async () => {
  const r = await runCli(t, ['catalogue', 'coverage', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const c = JSON.parse(r.stdout) as Coverage;
  assert.deepEqual(Object.keys(c), ['top', 'verifiable', 'services']);
  assert.equal(c.top, 50);
  assert.equal(c.services.length, 50);
  // Most used first, ties by the shipped popularity order, then by name: GitHub and 9gag (2 each;
  // 9gag is not in the shipped order), then Bluesky and Hacker News (1 each).
  assert.deepEqual(
    c.services.slice(0, 4).map((s) => s.svcId),
    ['github', '9gag', 'bluesky', 'hackernews'],
  );
  const methods = new Map(c.services.map((s) => [s.svcId, s.methods]));
  assert.deepEqual(methods.get('github'), ['rel-me', 'proof']);
  // Hacker News shows no rel="me" links, and no method reads 9gag: the backlink check would be
  // tried on its page, but a person cannot count on it there.
  assert.deepEqual(methods.get('hackernews'), ['proof']);
  assert.deepEqual(methods.get('bluesky'), ['proof', 'atproto']);
  assert.deepEqual(methods.get('9gag'), []);
  assert.equal(c.verifiable, c.services.filter((s) => s.methods.length > 0).length);
  // A person's own methods only: the operator's mark is not one a person can earn.
  const ownMethods = VERIFICATION_METHODS.filter((m) => m !== 'operator') as string[];
  for (const s of c.services)
    assert.ok(
      s.methods.every((m) => ownMethods.includes(m)),
      s.svcId,
    );
});

test('the text form lists each service and the total by method', async () => {
  const r = await runCli(t, ['catalogue', 'coverage', '--top', '4']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^9gag\s+-$/m);
  assert.match(r.stdout, /^github\s+rel-me, proof$/m);
  assert.match(r.stdout, /3 of the 4 most popular services can be verified without an operator \(rel-me 1, proof 3, atproto 1\)/);
  assert.equal((await runCli(t, ['catalogue', 'coverage', '--top', 'x'])).code, 1);
});

test('a disabled service leaves the list; the checkers asked decide the methods', async () => {
  assert.equal((await runCli(t, ['catalogue', 'disable', 'github'])).code, 0);
  const after = JSON.parse((await runCli(t, ['--json', 'catalogue', 'coverage', '--top', '3'])).stdout) as Coverage;
  assert.deepEqual(
    after.services.map((s) => s.svcId),
    ['9gag', 'bluesky', 'hackernews'],
  );
  assert.equal((await runCli(t, ['catalogue', 'disable', 'github', '--enable'])).code, 0);

  const onlyBluesky = { method: 'rel-me' as const, appliesTo: (svc: { svcId: string }) => svc.svcId === 'bluesky' };
  const c = await verificationCoverage(t.ctx, 4, [onlyBluesky]);
  assert.deepEqual(
    c.services.map((s) => [s.svcId, s.methods]),
    [
      ['github', []],
      ['9gag', []],
      ['bluesky', ['rel-me']],
      ['hackernews', []],
    ],
  );
  assert.equal(c.verifiable, 1);
});
