// The development inbox (/dev/mail): the mail idsvc wrote as .eml files under MAIL_DIR, newest first,
// with their links clickable, so trying the site needs no mail program. The files hold live
// single-use links, so the page exists only where they are meant to be read: not when NODE_ENV is
// production, not when mail goes to an SMTP relay (there are no files to show), and only to a
// browser on this machine (the connection's own address, whatever a proxy header says).
import fs from 'node:fs/promises';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../domain/errors.js';
import type { TypedApp } from '../../http/typed-app.js';
import { sendPage, SITE, viewerOf } from '../http.js';
import { DevMailPage, type DevMail } from '../views/DevMail.js';

/** The newest messages shown; older files stay where they are. */
const SHOWN = 30;
/** A file larger than this is listed by name only: idsvc's own messages are a few kilobytes. */
const MAX_FILE_BYTES = 256 * 1024;

function fromThisMachine(address: string | undefined): boolean {
  if (!address || !ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'loopback';
}

/** Why the inbox is not shown here, or null when it is. */
function refusal(ctx: AppContext, peer: string | undefined): string | null {
  if (ctx.config.nodeEnv === 'production') return 'Not found.';
  if (ctx.config.smtpUrl)
    return 'Mail goes to the SMTP relay in SMTP_URL, so there are no files to show here. The development inbox lists the .eml files written when SMTP_URL is unset.';
  if (!fromThisMachine(peer)) return 'The development inbox opens only in a browser on the machine idsvc runs on.';
  return null;
}

async function readInbox(dir: string): Promise<DevMail[]> {
  let names: string[];
  try {
    names = (await fs.readdir(dir)).filter((f) => f.endsWith('.eml'));
  } catch {
    return [];
  }
  // The file names start with the time they were written.
  const newest = names.sort().reverse().slice(0, SHOWN);
  // Only in development, and only on this page: the parser is a development dependency.
  const { simpleParser } = await import('mailparser');
  const mails: DevMail[] = [];
  for (const file of newest) {
    const full = path.join(dir, file);
    const stat = await fs.stat(full);
    if (stat.size > MAX_FILE_BYTES) {
      mails.push({ file, to: '', subject: '(too large to show)', date: stat.mtimeMs, text: '' });
      continue;
    }
    const parsed = await simpleParser(await fs.readFile(full));
    const to = parsed.to === undefined ? [] : Array.isArray(parsed.to) ? parsed.to : [parsed.to];
    mails.push({
      file,
      to: to.map((a) => a.text).join(', '),
      subject: parsed.subject ?? '',
      date: parsed.date?.getTime() ?? stat.mtimeMs,
      text: parsed.text ?? '',
    });
  }
  return mails;
}

export function registerDevMailRoutes(app: TypedApp, ctx: AppContext): void {
  app.get('/dev/mail', { config: SITE, schema: { hide: true } }, async (request, reply) => {
    const refused = refusal(ctx, request.socket.remoteAddress);
    if (refused) throw new ApiError('not_found', refused);
    const mails = await readInbox(ctx.config.mailDir);
    return sendPage(reply, <DevMailPage viewer={await viewerOf(ctx, request, reply)} dir={ctx.config.mailDir} mails={mails} />);
  });
}
