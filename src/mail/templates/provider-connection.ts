// Sent to the account's address whenever a sign-in provider is connected or disconnected, so that a
// connection the owner did not make (someone at their unlocked computer) does not go unseen: a
// connection can log in to the account.
import { composeMail, type MailContent, type MailSite } from './compose.js';

export function providerConnectionMail(
  site: MailSite,
  p: { userId: string; provider: string; account: string | null; change: 'connected' | 'disconnected'; securityUrl: string; resetUrl: string },
): MailContent {
  const which = p.account ? `the ${p.provider} account "${p.account}"` : `a ${p.provider} account`;
  const connected = p.change === 'connected';
  return composeMail(
    site,
    `provider-${p.change}`,
    connected ? `${p.provider} was connected to your ${site.name} account` : `${p.provider} was disconnected from your ${site.name} account`,
    {
      intro: [
        connected
          ? `${which[0]!.toUpperCase()}${which.slice(1)} was just connected to your account "${p.userId}". It can now be used to log in.`
          : `${which[0]!.toUpperCase()}${which.slice(1)} was just disconnected from your account "${p.userId}". It can no longer be used to log in.`,
        'If that was you, there is nothing to do.',
      ],
      action: { label: 'See your sign-in providers', url: p.securityUrl },
      outro: [`If it was not you, disconnect what you do not know on that page and set a new password: ${p.resetUrl}`],
    },
  );
}
