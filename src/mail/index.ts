// Mail, for any feature that writes to people. The whole API:
//
//   const content = confirmAddressMail(mailSite(ctx.config), { userId, link, hours });
//   await queueMail(w, { to: address, ...content }, now);
//
// A template (src/mail/templates/, built on composeMail) turns what the message is about into a
// subject, a plain-text and an HTML part. queueMail writes the message to the queue on the given
// write: pass the handle of the change the mail is about, and the mail exists exactly when
// the change commits. The mail job (src/jobs/mail.ts) sends it through SMTP_URL, or writes an .eml
// file under MAIL_DIR when no relay is configured; retries and the failed state are its business.
// Never log a message's address, body or links.
import type { Config } from '../config.js';
import type { Write } from '../db/handle.js';
import { insertMail } from '../repositories/mail-queue.js';
import type { MailContent, MailSite } from './templates/compose.js';

export type { MailContent, MailSite } from './templates/compose.js';

export interface Mail extends MailContent {
  to: string;
}

export function mailSite(config: Pick<Config, 'siteName' | 'baseUrl'>): MailSite {
  return { name: config.siteName, baseUrl: config.baseUrl };
}

/** Queues one message; returns its queue id. */
export function queueMail(w: Write, mail: Mail, now: number): Promise<number> {
  return insertMail(w, { to: mail.to, kind: mail.kind, subject: mail.subject, text: mail.text, html: mail.html }, now);
}
