// "Forgot password": a single-use link, valid for an hour.
import { composeMail, type MailContent, type MailSite } from './compose.js';

export function resetPasswordMail(site: MailSite, p: { userId: string; link: string; minutes: number }): MailContent {
  return composeMail(site, 'reset-password', `Set a new password for ${site.name}`, {
    intro: [`Someone — we hope you — asked to set a new password for the account "${p.userId}" on ${site.name}.`],
    action: { label: 'Set a new password', url: p.link },
    outro: [
      `The link works once, for ${p.minutes} minutes. Setting a new password logs the account out everywhere.`,
      'If you did not ask, do nothing: your password stays as it is.',
    ],
  });
}
