// Mail as a real component: queued in the database, sent by the mail job through real SMTP (an
// in-process server) or written as .eml files, read back with a real MIME parser.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { sendDueMail, MAIL_GIVE_UP_AFTER_MS } from '../../src/jobs/mail.js';
import { mailSite, queueMail } from '../../src/mail/index.js';
import { confirmAddressMail } from '../../src/mail/templates/confirm-address.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { SMTP_PASSWORD, SMTP_USER, startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { runCli } from '../helpers/cli.js';

let smtp: TestSmtp;
let t: TestApp;

before(async () => {
  smtp = await startSmtp();
  t = await startTestApp({
    SMTP_URL: smtp.url,
    SMTP_USER,
    SMTP_PASSWORD,
    MAIL_FROM: 'Ids Example <no-reply@ids.example.org>',
    SITE_NAME: 'Ids Example',
    BASE_URL: 'https://ids.example.org',
  });
});
after(async () => {
  await t.close();
  await smtp.stop();
});

let n = 0;
/** Queues a confirmation mail with a link holding a fresh secret; returns the address and the secret. */
async function queueOne(
  app: TestApp = t,
  secret = `tok${++n}${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`,
): Promise<{ to: string; secret: string; id: number }> {
  const to = `person${n}.${Math.random().toString(36).slice(2, 7)}@example.net`;
  const link = `${app.config.baseUrl}/confirm?token=${secret}`;
  const id = await app.ctx.db.write((w) =>
    queueMail(w, { to, ...confirmAddressMail(mailSite(app.config), { userId: `user${n}`, link, hours: 24 }) }, app.clock.now()),
  );
  return { to, secret, id };
}

const rowsOf = (ids: number[]) => t.ctx.db.kysely.selectFrom('mail_queue').selectAll().where('id', 'in', ids).orderBy('id').execute();
const sent = (to: string) => smtp.received.filter((m) => m.rcptTo.includes(to));

const cli = (args: string[]) => runCli(t, args);

test('a queued message reaches the SMTP relay, logged in with SMTP_USER, as plain text and HTML with the site name, no tracking, no remote resources', async () => {
  const { to, secret, id } = await queueOne();
  assert.equal(await sendDueMail(t.ctx, t.app.log), 1);
  const [m] = sent(to);
  assert.ok(m, 'the message arrived');
  const p = m.parsed;
  assert.equal(p.subject, 'Confirm your e-mail address for Ids Example');
  assert.equal(p.from?.value[0]?.address, 'no-reply@ids.example.org');
  assert.equal(p.from?.value[0]?.name, 'Ids Example');
  assert.match(String(p.messageId), /^<[0-9a-f-]{36}@ids\.example\.org>$/);
  assert.equal(p.headers.get('auto-submitted'), 'auto-generated');
  const link = `https://ids.example.org/confirm?token=${secret}`;
  assert.ok(p.text?.includes(link), 'the plain-text part holds the link');
  assert.ok(p.text?.includes('Ids Example · https://ids.example.org'), 'and the site name and address');
  const html = String(p.html);
  assert.ok(html.includes(`href="${link}"`), 'the HTML part links to the very same address (no redirecting tracker)');
  assert.doesNotMatch(html, /<img|<script|<link|<iframe|url\(|@import/i, 'no images, scripts, styles or frames from anywhere');
  const urls = [...html.matchAll(/https?:\/\/[^"'<\s)]+/g)].map((x) => x[0]);
  assert.ok(urls.length > 0 && urls.every((u) => u.startsWith('https://ids.example.org')), `only the site's own addresses: ${urls.join(' ')}`);
  const [row] = await rowsOf([id]);
  assert.equal(row?.status, 'sent');
  assert.equal(row?.text_body, null, 'a sent message keeps no body: it held a single-use link');
  assert.equal(row?.html_body, null);
  assert.equal(await sendDueMail(t.ctx, t.app.log), 0, 'nothing is sent twice');
  assert.equal(sent(to).length, 1);
});

test('with the relay down for a while, every message is sent once it is back: none lost, none twice', async () => {
  const queued = [await queueOne(), await queueOne(), await queueOne(), await queueOne(), await queueOne()];
  const ids = queued.map((q) => q.id);
  await smtp.stop();
  try {
    assert.equal(await sendDueMail(t.ctx, t.app.log), 5);
    let rows = await rowsOf(ids);
    assert.ok(
      rows.every((r) => r.status === 'pending' && r.attempts === 1 && /ECONNECTION|ECONNREFUSED/.test(r.last_error ?? '')),
      JSON.stringify(rows.map((r) => r.last_error)),
    );
    assert.equal(await sendDueMail(t.ctx, t.app.log), 0, 'not retried before its back-off');
    // An hour of outage: several rounds, each failing.
    for (let i = 0; i < 8; i++) {
      t.clock.advance(8 * 60_000);
      await sendDueMail(t.ctx, t.app.log);
    }
    rows = await rowsOf(ids);
    assert.ok(
      rows.every((r) => r.status === 'pending' && r.attempts >= 3),
      'still queued, retried with back-off',
    );
  } finally {
    await smtp.start();
  }
  t.clock.advance(31 * 60_000); // past the longest back-off
  // Two instances on the same database run the job at once: each message goes out once.
  const t2 = await startTestApp({ ...t.cliEnv, SMTP_URL: smtp.url, SMTP_USER, SMTP_PASSWORD, MAIL_FROM: 'no-reply@ids.example.org' });
  try {
    t2.clock.advance(t.clock.now() - t2.clock.now());
    const [a, b] = await Promise.all([sendDueMail(t.ctx, t.app.log), sendDueMail(t2.ctx, t2.app.log)]);
    assert.equal(a + b, 5);
  } finally {
    await t2.close();
  }
  for (const q of queued) assert.equal(sent(q.to).length, 1, 'each message arrived exactly once');
  assert.ok((await rowsOf(ids)).every((r) => r.status === 'sent'));
});

test('several instances racing for a backlog send each message once', async () => {
  const queued = await Promise.all(Array.from({ length: 12 }, () => queueOne()));
  const t2 = await startTestApp({ ...t.cliEnv, SMTP_URL: smtp.url, SMTP_USER, SMTP_PASSWORD, MAIL_FROM: 'no-reply@ids.example.org' });
  try {
    t2.clock.advance(t.clock.now() - t2.clock.now());
    const counts = await Promise.all([sendDueMail(t.ctx, t.app.log), sendDueMail(t2.ctx, t2.app.log), sendDueMail(t.ctx, t.app.log)]);
    assert.equal(
      counts.reduce((x, y) => x + y, 0),
      12,
    );
  } finally {
    await t2.close();
  }
  for (const q of queued) assert.equal(sent(q.to).length, 1);
});

test('a recipient the relay refuses for good fails at once; `idsvc mail list --failed` shows it and `mail retry` sends it again', async () => {
  const refused = await queueOne();
  smtp.refuse.add(refused.to);
  await sendDueMail(t.ctx, t.app.log);
  const [row] = await rowsOf([refused.id]);
  assert.equal(row?.status, 'failed');
  assert.match(row?.last_error ?? '', /550/);
  assert.ok(!(row?.last_error ?? '').includes(refused.to), 'the relay echoed the address; it is blanked');

  const list = await cli(['--json', 'mail', 'list', '--failed']);
  assert.equal(list.code, 0, list.stderr);
  const failed = JSON.parse(list.stdout) as { id: number; status: string; kind: string; to: string; last_error: string }[];
  const mine = failed.find((f) => f.id === refused.id);
  assert.ok(mine, 'the failed message is listed');
  assert.equal(mine.kind, 'confirm-address');
  assert.equal(mine.status, 'failed');
  assert.ok(
    failed.every((f) => f.status === 'failed'),
    'only failed messages',
  );
  assert.ok(!list.stdout.includes(refused.secret), 'bodies and links are never listed');
  const text = await cli(['mail', 'list', '--failed']);
  assert.match(text.stdout, new RegExp(`^\\s*${refused.id}\\s+failed`, 'm'));

  smtp.refuse.delete(refused.to);
  const retry = await cli(['mail', 'retry', String(refused.id)]);
  assert.equal(retry.code, 0, retry.stderr);
  assert.match(retry.stdout, /1 message queued again/);
  // The CLI's clock is the system's: due from the moment it ran.
  t.clock.advance(Math.max(0, Date.now() - t.clock.now()));
  await sendDueMail(t.ctx, t.app.log);
  assert.equal((await rowsOf([refused.id]))[0]?.status, 'sent');
  assert.equal(sent(refused.to).length, 1);
  assert.equal((await cli(['mail', 'retry'])).code, 1, 'retry needs ids or --all');
});

test('a message still unsent after a day fails, and says why', async () => {
  const late = await queueOne();
  await smtp.stop();
  try {
    await sendDueMail(t.ctx, t.app.log);
    t.clock.advance(MAIL_GIVE_UP_AFTER_MS);
    await sendDueMail(t.ctx, t.app.log);
  } finally {
    await smtp.start();
  }
  const [row] = await rowsOf([late.id]);
  assert.equal(row?.status, 'failed');
  assert.match(row?.last_error ?? '', /ECONNECTION|ECONNREFUSED/);
  t.clock.advance(60 * 60_000);
  await sendDueMail(t.ctx, t.app.log);
  assert.equal(sent(late.to).length, 0, 'a failed message is not sent by itself');
});

test('no address, token or link in any log line', async () => {
  const rows = await t.ctx.db.kysely.selectFrom('mail_queue').select('to_address').execute();
  assert.ok(rows.length > 10);
  const all = t.logs.join('\n');
  assert.match(all, /"msg":"mail sent"/);
  assert.match(all, /"msg":"mail not sent yet; will retry"/);
  assert.match(all, /"msg":"mail failed: see idsvc mail list --failed"/);
  for (const r of rows) assert.ok(!all.includes(r.to_address), 'an address reached the log');
  assert.ok(!/token=|tok\d/.test(all), 'a link or token reached the log');
});

test('without SMTP_URL each message is written as an .eml file, and one log line names the file', async () => {
  const local = await startTestApp({ BASE_URL: 'http://127.0.0.1:8080' });
  try {
    // As long as a real token (base64url of 32 bytes), so the link's line is longer than 76 octets.
    const { to, secret } = await queueOne(local, randomBytes(32).toString('base64url'));
    assert.equal(await sendDueMail(local.ctx, local.app.log), 1);
    const files = fs.readdirSync(local.config.mailDir).filter((f) => f.endsWith('.eml'));
    assert.equal(files.length, 1);
    const file = path.join(local.config.mailDir, files[0]!);
    assert.equal(fs.statSync(file).mode & 0o077, 0, 'only the owner may read it: it holds a link');
    const parsed = await simpleParser(fs.readFileSync(file));
    assert.equal(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value[0]?.address : undefined, to);
    assert.equal(parsed.from?.value[0]?.address, 'no-reply@localhost', 'a local install signs as localhost');
    assert.ok(parsed.text?.includes(`http://127.0.0.1:8080/confirm?token=${secret}`));
    assert.ok(String(parsed.html).includes(secret));
    // Read as text, the file holds the link whole, as it works when copied: no quoted-printable
    // line splits or `=3D` for `=`.
    const raw = fs.readFileSync(file, 'utf8');
    assert.ok(raw.includes(`http://127.0.0.1:8080/confirm?token=${secret}\n`), 'the link is in the raw file as it is');
    assert.match(raw, /Content-Type: text\/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n/);
    assert.doesNotMatch(raw, /quoted-printable/i);
    const lines = local.logs.filter((l) => l.includes('mail written to file'));
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]!).file, file);
    const all = local.logs.join('\n');
    assert.ok(!all.includes(secret) && !all.includes(to));
  } finally {
    await local.close();
  }
});
