// Sign-in providers on the site: their buttons beside the log-in and sign-up forms, the page that
// hands the browser to a provider, the sign-up form after a provider answered, and the account's
// list of connections.
import { CsrfField, Checkbox, TextField } from './fields.js';
import { Day, ErrorSummary, Layout } from './Layout.js';

export interface ProviderButton {
  slug: string;
  name: string;
  /** Mastodon: the form asks for the person's server. */
  asksServer?: boolean;
}

/** One small form per provider: a POST, so that only this site can start a connection. */
export function ProviderButtons(p: { providers: readonly ProviderButton[]; csrf: string; purpose: 'login' | 'connect'; verb: string }) {
  if (p.providers.length === 0) return null;
  return (
    <div class="provider-buttons" data-providers="">
      {p.providers.map((b) => (
        <form method="post" action={`/auth/${b.slug}/start`} key={b.slug}>
          <CsrfField token={p.csrf} />
          <input type="hidden" name="purpose" value={p.purpose} />
          {b.asksServer ? (
            <TextField
              id={`${p.purpose}-${b.slug}-server`}
              name="server"
              label={`Your ${b.name} server`}
              hint="Its address, like mastodon.social"
              required
              maxLength={300}
              autocomplete="url"
            />
          ) : null}
          <button type="submit" class="button secondary wide" data-provider={b.slug}>
            {p.verb} {b.name}
          </button>
        </form>
      ))}
    </div>
  );
}

/**
 * The page between a button and the provider. A redirect answering the form would be a form
 * submission's navigation to another origin, which the site's form-action policy forbids; a page
 * that moves on by itself is an ordinary navigation.
 */
export function ContinueToProviderPage(p: { name: string; url: string }) {
  return (
    <Layout title={`Continue to ${p.name}`} narrow head={<meta http-equiv="refresh" content={`0;url=${p.url}`} />}>
      <div class="card form-card" data-page="provider-continue">
        <h1>Continue to {p.name}</h1>
        <p>
          <a class="button" href={p.url} rel="noreferrer">
            Continue to {p.name}
          </a>
        </p>
      </div>
    </Layout>
  );
}

/** A provider's answer that leads nowhere: refused, expired, or the address belongs to another account. */
export function ProviderMessagePage(p: { title: string; message: string; page: string; loginLink?: boolean }) {
  return (
    <Layout title={p.title} narrow>
      <div class="card form-card" data-page={p.page}>
        <h1>{p.title}</h1>
        <p>{p.message}</p>
        {p.loginLink ? (
          <p class="actions">
            <a class="button" href="/login">
              Log in
            </a>
          </p>
        ) : null}
      </div>
    </Layout>
  );
}

export interface ProviderSignUpValues {
  user_id: string;
  email: string;
  opt_in: boolean;
}

export function ProviderSignUpPage(p: {
  csrf: string;
  provider: string;
  account: string | null;
  /** The provider's verified address, used as given; null when the person must type and confirm one. */
  verifiedEmail: string | null;
  values: ProviderSignUpValues;
  errors?: Record<string, string>;
}) {
  const e = p.errors ?? {};
  return (
    <Layout title="Create your account" narrow>
      <div class="card form-card" data-page="provider-signup">
        <h1>Create your account</h1>
        <p>
          You signed in to {p.provider}
          {p.account ? (
            <>
              {' '}
              as <strong>{p.account}</strong>
            </>
          ) : null}
          . Choose a userId to create an idsvc account connected to it.
        </p>
        <ErrorSummary errors={e} />
        <form method="post" action="/auth/signup" novalidate>
          <CsrfField token={p.csrf} />
          {p.verifiedEmail ? (
            <p class="hint" data-verified-email="">
              Your e-mail address, verified by {p.provider}: <strong>{p.verifiedEmail}</strong>
            </p>
          ) : (
            <TextField
              name="email"
              label="E-mail address"
              type="email"
              autocomplete="email"
              required
              value={p.values.email}
              error={e.email}
              hint={`${p.provider} did not give an address it has verified: we mail a link to the one you give, to confirm it is yours.`}
            />
          )}
          <TextField
            name="user_id"
            label="userId"
            autocomplete="username"
            required
            value={p.values.user_id}
            error={e.user_id}
            spellcheck={false}
            hint="3–30 lower-case letters, digits or _. It is public: your page is at /u/<userId>."
          />
          <Checkbox name="opt_in" label="Show my identities to partner sites" checked={p.values.opt_in} />
          <button type="submit" class="button wide">
            Create account
          </button>
        </form>
      </div>
    </Layout>
  );
}

export interface ConnectionItem {
  id: number;
  providerName: string;
  username: string | null;
  createdAt: number;
}

export function ConnectionsSection(p: { csrf: string; connections: readonly ConnectionItem[]; available: readonly ProviderButton[] }) {
  return (
    <section class="card" aria-labelledby="connections-title" id="connections">
      <h2 id="connections-title">Sign-in providers</h2>
      {p.connections.length === 0 ? (
        <p class="empty">No provider is connected. Connect one to log in with it; connecting GitHub or GitLab also proves that identity.</p>
      ) : (
        <ul class="link-list">
          {p.connections.map((c) => (
            <li class="link-item" key={c.id} data-connection={c.providerName}>
              <div>
                <h3>
                  {c.providerName}
                  {c.username ? ` · ${c.username}` : ''}
                </h3>
                <p class="hint">
                  Connected on <Day ms={c.createdAt} />. You can log in with it.
                </p>
              </div>
              <form method="post" action="/account/connections/remove">
                <CsrfField token={p.csrf} />
                <input type="hidden" name="connection_id" value={String(c.id)} />
                <button type="submit" class="button small danger-ghost">
                  Disconnect<span class="visually-hidden"> {c.providerName}</span>
                </button>
              </form>
            </li>
          ))}
        </ul>
      )}
      <ProviderButtons providers={p.available} csrf={p.csrf} purpose="connect" verb="Connect" />
    </section>
  );
}
