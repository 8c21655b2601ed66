// The passkeys page: the account's passkeys with their names and times, a form to add one (run by
// the passkey script, as adding one needs the browser's WebAuthn), and a button to remove each.
import { ASSETS } from '../assets.js';
import type { PasskeySummary } from '../../repositories/passkeys.js';
import { AccountNav } from './AccountNav.js';
import { CsrfField, TextField } from './fields.js';
import { Layout, Notice, type Viewer, When } from './Layout.js';

export interface PasskeysPageProps {
  viewer: Viewer;
  passkeys: PasskeySummary[];
  /** Whether this installation can offer passkeys at all (BASE_URL, services/passkeys.ts). */
  offered: boolean;
  maxPasskeys: number;
  nameMax: number;
  notice?: string | undefined;
  warning?: string | undefined;
}

/** The two scripts a page with a passkey form needs, in order: the library, then ours. */
export function PasskeyScripts() {
  return (
    <>
      <script src={ASSETS.webauthn.url} defer />
      <script src={ASSETS.passkeys.url} defer />
    </>
  );
}

export function PasskeysPage(p: PasskeysPageProps) {
  return (
    <Layout title="Passkeys" viewer={p.viewer} narrow head={p.offered ? <PasskeyScripts /> : undefined}>
      <AccountNav current="security" />
      <h1>Passkeys</h1>
      {p.notice ? <Notice kind="success">{p.notice}</Notice> : null}
      {p.warning ? <Notice kind="error">{p.warning}</Notice> : null}
      <p class="hint">
        A passkey logs you in with your device's screen lock or security key instead of your password. Your password keeps working, and a forgotten one can
        still be reset by mail. We mail you whenever a passkey is added or removed.
      </p>
      <section class="card" aria-labelledby="passkeys-list">
        <h2 id="passkeys-list">Your passkeys</h2>
        {p.passkeys.length === 0 ? (
          <p>You have no passkeys yet.</p>
        ) : (
          <ul class="passkey-list" data-passkeys>
            {p.passkeys.map((k) => (
              <li key={k.id} data-passkey={k.name}>
                <div>
                  <strong>{k.name}</strong>
                  <p class="hint">
                    Added <When ms={k.createdAt} />
                    {' · '}
                    {k.lastUsedAt === null ? (
                      'never used yet'
                    ) : (
                      <>
                        last used <When ms={k.lastUsedAt} />
                      </>
                    )}
                  </p>
                </div>
                <form method="post" action="/account/passkeys/remove">
                  <CsrfField token={p.viewer.csrf} />
                  <input type="hidden" name="id" value={String(k.id)} />
                  <button type="submit" class="button secondary small" aria-label={`Remove the passkey ${k.name}`}>
                    Remove
                  </button>
                </form>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section class="card" aria-labelledby="passkey-add">
        <h2 id="passkey-add">Add a passkey</h2>
        {!p.offered ? (
          <p class="hint">Passkeys are not available on this installation: its address must be https.</p>
        ) : p.passkeys.length >= p.maxPasskeys ? (
          <p class="hint">You have {p.maxPasskeys} passkeys, the most an account can have. Remove one to add another.</p>
        ) : (
          <>
            <noscript>
              <p class="hint">Adding a passkey needs JavaScript.</p>
            </noscript>
            <form method="post" action="/account/passkeys/add" data-passkey-add hidden>
              <CsrfField token={p.viewer.csrf} />
              <TextField
                name="name"
                label="Name of this passkey"
                hint="So you can tell your passkeys apart, e.g. “Phone” or “Work laptop”."
                required
                maxLength={p.nameMax}
              />
              <p class="field-error" role="alert" data-passkey-error hidden />
              <button type="submit" class="button">
                Add a passkey
              </button>
            </form>
          </>
        )}
      </section>
    </Layout>
  );
}

/** The log-in page's passkey button: hidden until the passkey script finds WebAuthn in the browser. */
export function PasskeyLogInForm({ csrf }: { csrf: string }) {
  return (
    <form method="post" action="/login/passkey" class="passkey-login" data-passkey-login hidden>
      <CsrfField token={csrf} />
      <p class="field-error" role="alert" data-passkey-error hidden />
      <button type="submit" class="button secondary wide">
        Log in with a passkey
      </button>
    </form>
  );
}

/** The security page's pointer to the passkeys page. */
export function PasskeysSummary({ count }: { count: number }) {
  return (
    <section class="card" aria-labelledby="passkeys-title" id="passkeys">
      <h2 id="passkeys-title">Passkeys</h2>
      <p>
        {count === 0
          ? 'Log in without typing your password: with your phone, computer or security key.'
          : `You have ${count === 1 ? 'one passkey' : `${count} passkeys`}.`}{' '}
        <a href="/account/passkeys">Your passkeys</a>
      </p>
    </section>
  );
}
