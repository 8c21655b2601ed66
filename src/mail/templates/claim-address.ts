// Sent when someone signs up with an address that an unconfirmed account holds: whoever proves the
// address gets it, so a stranger who typed it in first cannot keep its owner out. The subject and
// the opening differ from the ordinary confirmation, because confirming here gives the address to
// the new sign-up and removes the earlier one: an owner whose own sign-up is still unconfirmed must
// not confirm a stranger's claim believing it to be their own confirmation.
import { composeMail, type MailContent, type MailSite } from './compose.js';

export function claimAddressMail(site: MailSite, p: { newUserId: string; holderUserId: string; link: string; hours: number }): MailContent {
  return composeMail(site, 'claim-address', `A second sign-up asks for your e-mail address on ${site.name}: confirm only if it was you`, {
    intro: [
      `A second account, "${p.newUserId}", asks to take this e-mail address on ${site.name}. Confirm only if you just signed up as "${p.newUserId}".`,
      `The address is also the one given by the account "${p.holderUserId}", which was never confirmed. Whoever confirms the address keeps it: if you confirm now, the new account "${p.newUserId}" is created and the unconfirmed account "${p.holderUserId}" is removed.`,
    ],
    action: { label: `Confirm and create "${p.newUserId}"`, url: p.link },
    outro: [
      `The link works once, for ${p.hours} hours.`,
      `If you did not sign up as "${p.newUserId}", do nothing. If "${p.holderUserId}" is your own earlier sign-up, log in to it and ask for a new confirmation link instead.`,
    ],
  });
}
