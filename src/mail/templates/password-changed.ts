// The notice after any password change, so that a change the owner did not make does not go unseen.
import { composeMail, type MailContent, type MailSite } from './compose.js';

export function passwordChangedMail(site: MailSite, p: { userId: string; how: 'reset' | 'changed'; resetUrl: string }): MailContent {
  return composeMail(site, 'password-changed', `Your ${site.name} password was changed`, {
    intro: [
      p.how === 'reset'
        ? `The password of your account "${p.userId}" was just set anew with a link mailed to this address. Every session of the account was ended.`
        : `The password of your account "${p.userId}" was just changed on the account page. Your other sessions were ended.`,
      'If that was you, there is nothing to do.',
    ],
    outro: [`If it was not you, set a new password at once: ${p.resetUrl}`],
  });
}
