// Sent to the owner of an address that already has an account when someone signs up with it: the
// sign-up page says the same as for a new address, so only the owner learns of the attempt.
import { composeMail, type MailContent, type MailSite } from './compose.js';

export function signUpAttemptMail(site: MailSite, p: { userId: string; loginUrl: string; resetUrl: string }): MailContent {
  return composeMail(site, 'signup-attempt', `Someone tried to sign up on ${site.name} with your address`, {
    intro: [
      `Someone just tried to create an account on ${site.name} with this e-mail address. It already belongs to your account "${p.userId}", so nothing was created and nothing changed.`,
      'If that was you, log in instead:',
    ],
    action: { label: 'Log in', url: p.loginUrl },
    outro: [
      `Forgot your password? Set a new one here: ${p.resetUrl}`,
      'If it was not you, you need not do anything: your account and its data are as they were.',
    ],
  });
}
