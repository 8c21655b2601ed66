// The three messages of an address change (services/email-change.ts): the link to the NEW address
// (or, when that address has an account already, a note saying so and no link), and two notices to
// the OLD one, when the change is asked for and when it is done. The notices carry no link that
// could complete the change: only the new address's owner can.
import { composeMail, type MailContent, type MailSite } from './compose.js';

export function confirmNewAddressMail(site: MailSite, p: { userId: string; link: string; hours: number }): MailContent {
  return composeMail(site, 'email-change-confirm', `Confirm your new e-mail address for ${site.name}`, {
    intro: [
      `The account "${p.userId}" on ${site.name} asked to use this e-mail address from now on.`,
      'Confirm that the address is yours to make the switch. Until then the account keeps its old address.',
    ],
    action: { label: 'Use this address', url: p.link },
    outro: [`The link works once, for ${p.hours} hours.`, 'If you did not ask for this, do nothing: without this link nothing changes.'],
  });
}

export function newAddressTakenMail(site: MailSite, p: { userId: string; loginUrl: string; resetUrl: string }): MailContent {
  return composeMail(site, 'email-change-taken', `This address already has an account on ${site.name}`, {
    intro: [
      `The account "${p.userId}" on ${site.name} asked to use this e-mail address, but the address already belongs to another account, so nothing changed.`,
      'If that other account is yours, log in to it:',
    ],
    action: { label: 'Log in', url: p.loginUrl },
    outro: [`Forgot its password? Set a new one here: ${p.resetUrl}`, 'If you did not ask for this, you need not do anything.'],
  });
}

export function emailChangeRequestedMail(site: MailSite, p: { userId: string; hours: number; resetUrl: string }): MailContent {
  return composeMail(site, 'email-change-requested', `A change of your ${site.name} e-mail address was asked for`, {
    intro: [
      `Someone logged in to your account "${p.userId}" asked to move it to another e-mail address. We sent a link to that address; nothing changes unless it is followed within ${p.hours} hours.`,
      'If that was you, there is nothing to do here.',
    ],
    outro: [`If it was not you, someone knows your password: set a new one at once, which also ends every session: ${p.resetUrl}`],
  });
}

export function emailChangedMail(site: MailSite, p: { userId: string }): MailContent {
  return composeMail(site, 'email-changed', `Your ${site.name} e-mail address was changed`, {
    intro: [
      `The account "${p.userId}" no longer uses this e-mail address: its new address was just confirmed. Partner sites no longer find the account by this address.`,
      'If that was you, there is nothing to do.',
    ],
    outro: [
      // The old address can no longer reset the password: only the operator can give the account back.
      `If it was not you, tell the operators of ${site.name} (${site.baseUrl}) at once: mail for the account now goes to the new address.`,
    ],
  });
}
