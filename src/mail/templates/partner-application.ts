// Applying for partner keys: the operators hear of a new application, the applicant of the decision.
import { composeMail, type MailContent, type MailSite } from './compose.js';

export function applicationReceivedMail(site: MailSite, p: { application: string; applicant: string; reviewUrl: string }): MailContent {
  return composeMail(site, 'application-received', `New application for partner keys: ${p.application}`, {
    intro: [`${p.applicant} applied for partner keys for "${p.application}" on ${site.name}.`],
    action: { label: 'Review the application', url: p.reviewUrl },
    outro: ['You receive this because your account is an operator of this installation.'],
  });
}

export function applicationApprovedMail(site: MailSite, p: { application: string; dashboardUrl: string }): MailContent {
  return composeMail(site, 'application-approved', `Your application for "${p.application}" is approved`, {
    intro: [
      `Your application for partner keys for "${p.application}" on ${site.name} is approved.`,
      'Your api_key and api_token are on the partner dashboard. The api_token is shown once, when you issue it there: store it on your server right away.',
    ],
    action: { label: 'Open the partner dashboard', url: p.dashboardUrl },
  });
}

export function applicationDeclinedMail(site: MailSite, p: { application: string; reason: string; applyUrl: string }): MailContent {
  return composeMail(site, 'application-declined', `Your application for "${p.application}" was declined`, {
    intro: [`Your application for partner keys for "${p.application}" on ${site.name} was declined.`, `The reason given: ${p.reason}`],
    action: { label: 'Apply again', url: p.applyUrl },
  });
}

export function partnerInvitationMail(site: MailSite, p: { partner: string; inviter: string; link: string; days: number }): MailContent {
  return composeMail(site, 'partner-invitation', `You are invited to run "${p.partner}" on ${site.name}`, {
    intro: [
      `${p.inviter} invited this e-mail address to become a member of the partner "${p.partner}" on ${site.name}: members see its keys, webhooks and linked users, and can change them.`,
      `To accept, log in (or sign up) with this e-mail address, then follow the link.`,
    ],
    action: { label: 'Accept the invitation', url: p.link },
    outro: [`The link works once, for ${p.days} days. If you do not know ${p.inviter}, ignore this message.`],
  });
}
