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
import { connectionsOfUser } from '../../../repositories/provider-connections.js';
import { providerFamily, providerForKey } from '../../../connections/providers.js';

/** The account's connections, and the configured providers it has none of. */
async function connectionsView(ctx: AppContext, user: User) {
  const list = await connectionsOfUser(ctx.db, user.id);
  if (list.length === 0 && ctx.config.providers.length === 0) return undefined;
  const nameOf = (key: string) => providerForKey(ctx.config.providers, key)?.name ?? key;
  return {
    connections: list.map((c) => ({ id: c.id, providerName: nameOf(c.provider), username: c.username, createdAt: c.createdAt })),
    available: ctx.config.providers
      .filter((p) => !list.some((c) => providerFamily(c.provider) === p.key))
      .map((p) => ({ slug: p.slug, name: p.name, asksServer: p.kind === 'mastodon' })),
  };
}

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
  provider_connected: 'The provider is connected: you can log in with it. We mailed your address about it.',
  provider_already: 'That provider account is connected already.',
  provider_disconnected: 'The provider is disconnected. We mailed your address about it.',
};

const WARNINGS: Record<string, string> = {
  discovered_none: 'Nothing was added: tick the identities you want first.',
  resend_wait: 'We have sent the link several times in the last hour. Look in your spam folder, or try again later.',
  provider_elsewhere: 'That provider account is connected to another account here. Log in to that account and disconnect it there first.',
  provider_taken: 'An account of that provider is connected already. Disconnect it first to connect another.',
  provider_gone: 'That connection no longer exists.',
  provider_wait: 'You have disconnected a lot just now. Try again in a minute.',
};

type Extra = Omit<AccountPageProps, 'data' | 'csrf' | 'discovery' | 'connections' | 'page'> & {
  page?: AccountPageName;
  discoverError?: string;
  discoverUrl?: string;
};

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
  const passkeyCount = page === 'security' ? await countPasskeys(ctx.db, user.id) : undefined;
  const connections = page === 'security' ? await connectionsView(ctx, user) : undefined;
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
      {...(connections ? { connections } : {})}
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
