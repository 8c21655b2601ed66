// The proof providers' data (catalogue/proofs.json): each definition's own examples, the schema's
// refusals, and the proof text's matching rules. Pure: no database, no network.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.js';
import { loadCatalogueFile } from '../../src/catalogue/catalogue-file.js';
import { buildProfileUrl } from '../../src/catalogue/profile-url.js';
import {
  fillUrl,
  identityVariables,
  loadProofProviders,
  parseProofProviders,
  proofUrlVariables,
  readAnswer,
  type ProofProvider,
} from '../../src/verification/proof-providers.js';
import { findProof, proofForms } from '../../src/verification/proof-text.js';

const FORMS = proofForms('https://idsvc.example', 'alice_42');
const providers = loadProofProviders();
const catalogue = new Map(loadCatalogueFile().map((e) => [e.svcId, e]));

/** A definition's example run as the checker would read it: variables from a profile URL of one of its services. */
function runExample(p: ProofProvider, ex: ProofProvider['examples'][number]): string {
  const svcId = p.services.find((s) => catalogue.has(s));
  const url = svcId ? buildProfileUrl(catalogue.get(svcId)!, ex.usrSvcId) : '';
  let vars = svcId ? identityVariables(p, svcId, ex.usrSvcId, url) : { id: ex.usrSvcId, user: ex.usrSvcId };
  assert.ok(vars, `${p.id}: "${ex.usrSvcId}" is an identity of ${svcId}`);
  vars = { ...vars, ...ex.vars };
  if (ex.proofUrl !== undefined) {
    const given = proofUrlVariables(p, vars, ex.proofUrl);
    assert.ok(given && 'vars' in given, `${p.id}: the example's proof address is one it reads`);
    vars = given.vars;
  }
  const body = ex.body ?? JSON.stringify(ex.json);
  return readAnswer(p, vars, { status: ex.status ?? 200, body, truncated: false }, FORMS).result;
}

describe('the shipped definitions', () => {
  test('every definition runs its own examples, and each has a positive and a negative one', () => {
    assert.ok(providers.length >= 15, `${providers.length} definitions`);
    for (const p of providers) {
      const expects = new Set(p.examples.map((e) => e.expect));
      assert.ok(expects.has('verified') && expects.has('absent'), `${p.id} has a positive and a negative example`);
      for (const ex of p.examples) assert.equal(runExample(p, ex), ex.expect, `${p.id}: ${ex.note}`);
    }
  });

  test('an example that would be read wrongly fails: the examples are not decoration', () => {
    const github = providers.find((p) => p.id === 'github')!;
    const wrong = { ...github.examples[0]!, json: { login: 'octocat', bio: 'nothing here' } };
    assert.equal(runExample(github, wrong), 'absent');
  });

  test('every service a definition names is in the catalogue', () => {
    assert.deepEqual(
      providers.flatMap((p) => p.services.filter((s) => !catalogue.has(s))),
      [],
    );
  });

  test('every catalogue service a definition names gives it an identity to read', () => {
    for (const p of providers) {
      for (const svcId of p.services) {
        const svc = catalogue.get(svcId);
        if (!svc) continue;
        const id = svc.urlBuilder ? 'alice@mastodon.social' : 'alice';
        assert.ok(identityVariables(p, svcId, id, buildProfileUrl(svc, id)), `${p.id} reads ${svcId} (${buildProfileUrl(svc, id)})`);
      }
    }
  });

  test('at least 15 catalogue services are proven by a definition, the ones the issue names among them', () => {
    const proven = [...catalogue.values()].filter((svc) =>
      providers.some((p) => identityVariables(p, svc.svcId, 'alice', buildProfileUrl(svc, svc.urlBuilder ? 'alice@mastodon.social' : 'alice')) !== null),
    );
    const ids = proven.map((s) => s.svcId);
    assert.ok(ids.length >= 15, `${ids.length} services`);
    for (const id of [
      'github',
      'gitlab',
      'codeberg',
      'gitea',
      'mastodon',
      'mastodonsocial',
      'bluesky',
      'hackernews',
      'lobsters',
      'reddit',
      'devcommunity',
      'bitwardenforum',
    ])
      assert.ok(ids.includes(id), id);
  });
});

describe('the proof text', () => {
  test('both forms are found inside other text, and alone for `equals`', () => {
    assert.equal(findProof('me: https://idsvc.example/u/alice_42.', FORMS, 'contains'), FORMS.profileUrl);
    assert.equal(findProof('(idsvc:idsvc.example:alice_42)', FORMS, 'contains'), FORMS.short);
    assert.equal(findProof(' https://idsvc.example/u/alice_42/ ', FORMS, 'equals'), FORMS.profileUrl);
    assert.equal(findProof('https://idsvc.example/u/alice_42 and more', FORMS, 'equals'), null);
  });

  test('another account’s proof does not count', () => {
    assert.equal(findProof('https://idsvc.example/u/alice_421', FORMS, 'contains'), null);
    assert.equal(findProof('idsvc:idsvc.example:alice_42x', FORMS, 'contains'), null);
    assert.equal(findProof('idsvc:idsvc.example:alice_42.bob', FORMS, 'contains'), null);
  });

  test('the short form names the host with its port', () => {
    assert.equal(proofForms('http://127.0.0.1:8080', 'bob_1').short, 'idsvc:127.0.0.1:8080:bob_1');
  });
});

describe('the schema', () => {
  const good = () =>
    JSON.parse(
      JSON.stringify({
        format: 'idsvc-proofs/1',
        providers: [providers.find((p) => p.id === 'github')!].map(({ profileUrlPattern: _a, proofUrlPattern: _b, ...rest }) => rest),
      }),
    ) as { format: string; providers: Record<string, unknown>[] };

  test('accepts a definition as shipped', () => {
    assert.equal(parseProofProviders(good()).length, 1);
  });

  const refusals: [string, (d: Record<string, unknown>) => void, RegExp][] = [
    ['an unknown field', (d) => (d.colour = 'red'), /providers\[0\] \("github"\): .*colour|additional/i],
    ['a format that is not json, html, xml or text', (d) => (d.format = 'yaml'), /providers\[0\] \("github"\): \/format/],
    [
      'a template naming a variable it does not have',
      (d) => ((d.fetch as { url: string }).url = 'https://api.github.com/users/{who}'),
      /providers\[0\] \("github"\): fetch.url names \{who\}/,
    ],
    ['a fetch URL that is not http(s)', (d) => ((d.fetch as { url: string }).url = 'file:///etc/{user}'), /fetch.url must be an http\(s\) URL template/],
    ['a pattern that does not compile', (d) => (d.profileUrl = '^https://(?<user>[a-z$'), /profileUrl is not a valid regular expression/],
    ['an unanchored pattern', (d) => (d.profileUrl = 'https://github.com/(?<user>[a-z]+)'), /profileUrl must be anchored/],
    [
      'a proof address pattern that does not name the user',
      (d) => (d.proofUrl = { pattern: '^https://gist\\.github\\.com/(?<gist>[0-9a-f]{20})$', example: '' }),
      /must have a named group "user"/,
    ],
    ['examples without a negative one', (d) => (d.examples = [(d.examples as unknown[])[0]]), /examples/],
    [
      'an HTML place that is not a selector',
      (d) => {
        d.format = 'html';
        d.proof = { in: [{ at: 'div > p' }], relation: 'contains' };
      },
      /is not a selector/,
    ],
  ];
  for (const [what, change, message] of refusals) {
    test(`refuses ${what}, in one line naming the entry`, () => {
      const file = good();
      change(file.providers[0]!);
      assert.throws(
        () => parseProofProviders(file),
        (err: Error) => message.test(err.message) && !err.message.includes('\n'),
      );
    });
  }

  test('a duplicate id is refused', () => {
    const file = good();
    file.providers.push(file.providers[0]!);
    assert.throws(() => parseProofProviders(file), /providers\[1\] \("github"\): id is a duplicate/);
  });

  test('a bad file stops start-up with one line naming PROOF_PROVIDERS and the entry', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-proofs-'));
    const file = path.join(dir, 'proofs.json');
    const bad = good();
    (bad.providers[0]!.fetch as { url: string }).url = 'https://api.github.com/users/{nobody}';
    fs.writeFileSync(file, JSON.stringify(bad));
    assert.throws(
      () => loadConfig({ PROOF_PROVIDERS: file }),
      (err: Error) =>
        err instanceof ConfigError && err.variable === 'PROOF_PROVIDERS' && /providers\[0\] \("github"\)/.test(err.message) && !err.message.includes('\n'),
    );
    fs.writeFileSync(file, '{ not json');
    assert.throws(
      () => loadConfig({ PROOF_PROVIDERS: file }),
      (err: Error) => err instanceof ConfigError && !err.message.includes('\n'),
    );
    fs.rmSync(dir, { recursive: true });
  });

  test('an operator’s file with a new provider is loaded in place of the shipped one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-proofs-'));
    const file = path.join(dir, 'proofs.json');
    const mine = good();
    mine.providers[0]!.id = 'my-forge';
    mine.providers[0]!.services = ['gitea'];
    fs.writeFileSync(file, JSON.stringify(mine));
    assert.deepEqual(
      loadConfig({ PROOF_PROVIDERS: file }).proofProviders.map((p) => p.id),
      ['my-forge'],
    );
    fs.rmSync(dir, { recursive: true });
  });
});

describe('where proofs are read from', () => {
  test('test origins are refused in production, and must be origin pairs', () => {
    assert.throws(
      () => loadConfig({ NODE_ENV: 'production', IDSVC_TEST_PROOF_ORIGINS: 'https://api.github.com=http://127.0.0.1:1' }),
      /IDSVC_TEST_PROOF_ORIGINS is for tests and development only/,
    );
    assert.throws(() => loadConfig({ IDSVC_TEST_PROOF_ORIGINS: 'nonsense' }), /IDSVC_TEST_PROOF_ORIGINS must be origin=origin pairs/);
    assert.equal(
      loadConfig({ IDSVC_TEST_PROOF_ORIGINS: 'https://api.github.com=http://127.0.0.1:1' }).proofOrigins.get('https://api.github.com'),
      'http://127.0.0.1:1',
    );
    assert.equal(loadConfig({}).proofOrigins.size, 0);
  });

  test('every substituted value is encoded: an identifier cannot change the host or path', () => {
    const github = providers.find((p) => p.id === 'github')!;
    const vars = identityVariables(github, 'github', '../x?y=1#z', 'https://www.github.com/..%2Fx')!;
    assert.equal(fillUrl(github.fetch.url, vars), 'https://api.github.com/users/..%2Fx%3Fy%3D1%23z');
    assert.equal(identityVariables(github, 'github', '..', 'https://www.github.com/..'), null, 'a dot-segment would name another resource');
    assert.equal(identityVariables(github, 'github', '.', 'https://www.github.com/.'), null);
  });

  test('a proof address must match the pattern and name the identity’s own account', () => {
    const gist = providers.find((p) => p.id === 'github-gist')!;
    const vars = { id: 'octocat', user: 'octocat' };
    assert.deepEqual(proofUrlVariables(gist, vars, 'https://gist.github.com/OctoCat/aa5a315d61ae9438b18d'), {
      vars: { ...vars, gist: 'aa5a315d61ae9438b18d' },
    });
    assert.deepEqual(proofUrlVariables(gist, vars, 'https://gist.github.com/mallory/aa5a315d61ae9438b18d'), {
      refused: 'the proof address belongs to mallory, not to octocat',
    });
    assert.equal(proofUrlVariables(gist, vars, 'http://127.0.0.1/octocat/aa5a315d61ae9438b18d'), null);
    assert.equal(proofUrlVariables(gist, vars, 'https://gist.github.com.evil.example/octocat/aa5a315d61ae9438b18d'), null);
  });
});

describe('bounded reading', () => {
  test('an answer with more markup than is read is transient, and reading it stays cheap', () => {
    const mastodon = providers.find((p) => p.id === 'mastodon')!;
    const vars = { id: 'alice@mastodon.social', user: 'alice', host: 'mastodon.social' };
    const summary = `${'<div>'.repeat(60_000)}${FORMS.profileUrl}`;
    const started = process.cpuUsage();
    const reading = readAnswer(mastodon, vars, { status: 200, body: JSON.stringify({ preferredUsername: 'alice', summary }), truncated: false }, FORMS);
    const used = process.cpuUsage(started);
    assert.equal(reading.result, 'transient');
    assert.ok((used.user + used.system) / 1000 < 200, 'well under 200 ms of CPU');
  });

  test('deep nesting within the budget is read without recursion', () => {
    const telegram = providers.find((p) => p.id === 'telegram')!;
    const body = `${'<span>'.repeat(3000)}<div class="tgme_page_description">${FORMS.short}</div>`;
    assert.equal(readAnswer(telegram, { id: 'durov', user: 'durov' }, { status: 200, body, truncated: false }, FORMS).result, 'verified');
  });

  test('a cut answer without the proof in the part read is not a negative', () => {
    const telegram = providers.find((p) => p.id === 'telegram')!;
    assert.equal(
      readAnswer(telegram, { id: 'durov', user: 'durov' }, { status: 200, body: '<div class="tgme_page_description">Hi</div>', truncated: true }, FORMS).result,
      'transient',
    );
  });
});
