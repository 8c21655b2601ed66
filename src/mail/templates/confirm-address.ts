// Sent at sign-up (and by "send the link again"): the link that proves the address is the owner's.
import { composeMail, type MailContent, type MailSite } from './compose.js';

export function confirmAddressMail(site: MailSite, p: { userId: string; link: string; hours: number }): MailContent {
  return composeMail(site, 'confirm-address', `Confirm your e-mail address for ${site.name}`, {
    intro: [
      `Someone — we hope you — created the account "${p.userId}" on ${site.name} with this e-mail address.`,
      'Confirm that the address is yours to finish. Until then partner sites see nothing of the account, and nothing they stored about this address is added to it.',
    ],
    action: { label: 'Confirm my address', url: p.link },
    outro: [
      `The link works once, for ${p.hours} hours.`,
      'If you did not sign up, do nothing: the account cannot use your address without this link, and it is removed after a few days.',
    ],
  });
}
