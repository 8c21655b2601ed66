// Reading the mail an app sent, as its recipient would: the mail job runs, and the messages are
// parsed from the .eml files it wrote (the default without SMTP_URL), once the work answered
// requests handed over is done.
import fs from 'node:fs';
import path from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { sendDueMail } from '../../src/jobs/mail.js';
import type { TestApp } from './app.js';

function recipients(m: ParsedMail): string[] {
  const to = m.to === undefined ? [] : Array.isArray(m.to) ? m.to : [m.to];
  return to.flatMap((a) => a.value.map((v) => (v.address ?? '').toLowerCase()));
}

/** Every message sent to `address` so far, oldest first (sends what is queued first). */
export async function mailsTo(t: TestApp, address: string): Promise<ParsedMail[]> {
  // Some answers go out before their mail is queued (services/after-answer.ts).
  await t.ctx.afterAnswer.idle();
  await sendDueMail(t.ctx, t.app.log);
  const dir = t.config.mailDir;
  if (!fs.existsSync(dir)) return [];
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.eml'));
  const parsed = await Promise.all(
    files.map(async (f) => ({ f, m: await simpleParser(fs.readFileSync(path.join(dir, f))), mtime: fs.statSync(path.join(dir, f)).mtimeMs })),
  );
  return parsed
    .filter((p) => recipients(p.m).includes(address.toLowerCase()))
    .sort((a, b) => a.mtime - b.mtime || a.f.localeCompare(b.f, 'en', { numeric: true }))
    .map((p) => p.m);
}

/** The newest message to `address`; fails when there is none. */
export async function lastMailTo(t: TestApp, address: string): Promise<ParsedMail> {
  const all = await mailsTo(t, address);
  const m = all.at(-1);
  if (!m) throw new Error('no mail was sent to that address');
  return m;
}

/** The path and query of the first link in the message's text that goes to `route` on the site. */
export function linkIn(m: ParsedMail, route: string): string {
  const re = new RegExp(`https?://[^\\s/]+(${route.replace(/[?]/g, '\\?')}[^\\s]*)`);
  const match = re.exec(m.text ?? '');
  if (!match) throw new Error(`no ${route} link in the message "${m.subject}"`);
  return match[1]!;
}
