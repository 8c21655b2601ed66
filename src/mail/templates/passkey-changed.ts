// The notice after a passkey is added to or removed from an account: a passkey is a way in, so one
// the owner did not add must not go unseen, nor a removal they did not make.
import { composeMail, type MailContent, type MailSite } from './compose.js';

export function passkeyChangedMail(
  site: MailSite,
  p: { userId: string; how: 'added' | 'removed'; name: string; accountUrl: string; resetUrl: string },
): MailContent {
  const added = p.how === 'added';
  return composeMail(
    site,
    added ? 'passkey-added' : 'passkey-removed',
    added ? `A passkey was added to your ${site.name} account` : `A passkey was removed from your ${site.name} account`,
    {
      intro: [
        added
          ? `A passkey named "${p.name}" was just added to your account "${p.userId}". It can log in to the account without the password.`
          : `The passkey named "${p.name}" was just removed from your account "${p.userId}". It can no longer log in to the account.`,
        'If that was you, there is nothing to do.',
      ],
      outro: [
        added
          ? `If it was not you, remove that passkey at ${p.accountUrl} and set a new password at once: ${p.resetUrl}`
          : `If it was not you, someone else is in your account: set a new password at once: ${p.resetUrl}, then check your passkeys at ${p.accountUrl}`,
      ],
    },
  );
}
