// The account pages themselves: GET /account (identities) and its sibling pages, and the render
// every form uses to answer a refusal on the page the form belongs to, beside the fields the user
// filled in.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import type { User } from '../../../repositories/users.js';
import { discoveryView } from '../../../services/discovery.js';
import { UNPROVEN_ACCOUNT_DAYS } from '../../../services/ownership.js';
import { loadAccountData } from '../../account-data.js';
import { optionalText, sendPage, SITE } from '../../http.js';
import { csrfToken } from '../../session.js';
import { AccountPage, type AccountPageProps } from '../../views/Account.js';
import { ACCOUNT_PAGES, type AccountPageName } from '../../views/AccountNav.js';
import { isProvenAccount } from '../../../domain/visibility.js';
import { countPasskeys } from '../../../repositories/passkeys.js';

const NOTICES: Record<string, string> = {
  opted_in: 'You are now visible to partner sites, and your public page is online.',
  opted_out: 'You are now hidden from every partner site, and your public page is offline.',
  discoverable_on: 'You are now discoverable: partner sites can find you by an identity or in an address book, and anyone by your e-mail address.',
  discoverable_off: 'You are no longer discoverable. Only those who know your e-mail address or userId can see you.',
  profile: 'Your profile is saved.',
  identity_saved: 'Identity saved.',
  identity_removed: 'Identity removed.',
  link_ended: 'The link has ended. That site has been told.',
  confirmed: 'Your e-mail address is confirmed.',
  resent: 'We sent the link again. It works for 24 hours; earlier links no longer do.',
  password_changed: 'Your password is changed. Your other sessions have ended.',
  email_sent:
    'Check the new inbox: we sent a link there. Follow it within 24 hours to switch; until then your address stays as it is. If that address already has an account, the message says so instead.',
  email_changed: 'Your e-mail address is changed. Your other sessions have ended.',
  discovered: 'The identities you ticked are added.',
  discovery_done: 'The search is done: tick what to add under “Find my identities”.',
};

const WARNINGS: Record<string, string> = {
  discovered_none: 'Nothing was added: tick the identities you want first.',
  resend_wait: 'We have sent the link several times in the last hour. Look in your spam folder, or try again later.',
};

type Extra = Omit<AccountPageProps, 'data' | 'csrf' | 'discovery' | 'page'> & { page?: AccountPageName; discoverError?: string; discoverUrl?: string };

/**
 * The page a refusal is shown on: the one holding the refused form, so the person sees the message
 * beside what they typed. The forms' handlers say what was refused, not where it is shown.
 */
function pageOf(extra: Extra): AccountPageName {
  if (extra.page) return extra.page;
  if (extra.profileError !== undefined) return 'profile';
  if (extra.passwordError !== undefined || extra.emailForm !== undefined) return 'security';
  if (extra.deleteError !== undefined) return 'data';
  return 'identities';
}

export async function accountPage(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User, extra: Extra, status = 200) {
  const data = await loadAccountData(ctx, user);
  const unprovenUntil = !isProvenAccount(user) ? user.created_at + UNPROVEN_ACCOUNT_DAYS * 24 * 3600 * 1000 : undefined;
  const { discoverError, discoverUrl, page: _page, ...props } = extra;
  const page = pageOf(extra);
  // Only the identities page shows the search, so only it reads the search's state.
  const passkeyCount = page === 'security' ? await countPasskeys(ctx.db.kysely, user.id) : undefined;
  const discovery =
    page === 'identities'
      ? { view: await discoveryView(ctx, user), services: (await ctx.catalogue.get()).byId, error: discoverError, url: discoverUrl }
      : undefined;
  return sendPage(
    reply,
    <AccountPage
      page={page}
      data={data}
      csrf={await csrfToken(ctx, request, reply)}
      unprovenUntil={unprovenUntil}
      {...(discovery ? { discovery } : {})}
      {...(passkeyCount !== undefined ? { passkeyCount } : {})}
      {...props}
    />,
    status,
  );
}

export function registerAccountView(app: TypedApp, ctx: AppContext): void {
  for (const { page, path } of ACCOUNT_PAGES) {
    app.get(
      path,
      { config: SITE, schema: { hide: true, querystring: Type.Object({ msg: optionalText(40), checked: optionalText(64) }) } },
      async (request, reply) => {
        const user = request.user;
        const q = request.query;
        return accountPage(ctx, request, reply, user, {
          page,
          notice: q.msg ? NOTICES[q.msg] : undefined,
          warning: q.msg ? WARNINGS[q.msg] : undefined,
          checked: q.checked,
        });
      },
    );
  }
}
