// A partner site was connected to the account (sync_user), like "a new application was authorised".
import { composeMail, type MailContent, type MailSite } from './compose.js';

export function partnerLinkedMail(site: MailSite, p: { userId: string; partner: string; linksUrl: string }): MailContent {
  return composeMail(site, 'partner-linked', `${p.partner} was connected to your ${site.name} account`, {
    intro: [
      `The site "${p.partner}" was just connected to your account "${p.userId}" with your e-mail address and password. It can now read all your identities and profile fields, and what you change there flows to ${site.name}.`,
    ],
    action: { label: 'See connected sites', url: p.linksUrl },
    outro: ['If you did not do this, end the link on that page and change your password.'],
  });
}
