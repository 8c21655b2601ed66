// Sent when someone signs up with an address that an unconfirmed account holds: whoever proves the
// address gets it, so a stranger who typed it in first cannot keep its owner out.
import { composeMail, type MailContent, type MailSite } from './compose.js';

export function claimAddressMail(site: MailSite, p: { newUserId: string; holderUserId: string; link: string; hours: number }): MailContent {
  return composeMail(site, 'claim-address', `Confirm your e-mail address for ${site.name}`, {
    intro: [
      `Someone — we hope you — just signed up on ${site.name} as "${p.newUserId}" with this e-mail address.`,
      `The address is also the one given by the account "${p.holderUserId}", which was never confirmed. Whoever confirms the address keeps it: if you confirm now, your new account "${p.newUserId}" is created and the unconfirmed account "${p.holderUserId}" is removed.`,
    ],
    action: { label: `Confirm and create "${p.newUserId}"`, url: p.link },
    outro: [
      `The link works once, for ${p.hours} hours.`,
      `If you did not sign up, do nothing. If "${p.holderUserId}" is your own earlier sign-up, log in to it and ask for a new confirmation link instead.`,
    ],
  });
}
