// A CLI command whose change writes links (the confirmation mail of `user create --unproven`, the
// webhook events of a change) builds them from BASE_URL, like the server. Run without it, the command
// says so on stderr, once; a command that writes no link says nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { lastMailTo } from '../helpers/mailbox.js';

let t: TestApp;
before(async () => {
  t = await startTestApp({ BASE_URL: 'https://id.example.org' });
});
after(() => t.close());

const WARNING =
  /^warning: BASE_URL is not set, so the links this command writes \(in webhook events and mails\) point at http:\/\/127\.0\.0\.1:8080; run the CLI with the server's settings \(docs\/deploy\.md\)\n$/;

test('without BASE_URL, a command that writes a link warns once; one that writes none stays quiet', async () => {
  const created = await runCli(t, ['user', 'create', '--email', 'unset.base@example.org', '--user-id', 'unset_base', '--unproven'], {
    stdin: 'violet kettle drums at dawn',
    env: { BASE_URL: '' },
  });
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stderr, WARNING);
  const listed = await runCli(t, ['partner', 'list'], { env: { BASE_URL: '' } });
  assert.equal(listed.code, 0);
  assert.equal(listed.stderr, '');
});

test("with the server's BASE_URL, the same command is quiet and its links are the server's", async () => {
  const created = await runCli(t, ['user', 'create', '--email', 'set.base@example.org', '--user-id', 'set_base', '--unproven'], {
    stdin: 'violet kettle drums at dawn',
  });
  assert.equal(created.code, 0, created.stderr);
  assert.equal(created.stderr, '');
  // The CLI queued it by the wall clock; the app's clock is a test clock, behind it.
  t.clock.advance(Date.now() - t.clock.now() + 60_000);
  assert.match((await lastMailTo(t, 'set.base@example.org')).text ?? '', /https:\/\/id\.example\.org\/confirm\?token=/);
});
