// Pages about proving an address: "check your inbox" after sign-up, the page a mailed link opens
// (a button, so that mail scanners that open links prove nothing), and what following it did.
import { CsrfField } from './fields.js';
import { Layout } from './Layout.js';

export function CheckInboxPage() {
  return (
    <Layout title="Check your inbox" narrow>
      <div class="card form-card" data-page="check-inbox">
        <h1>Check your inbox</h1>
        <p>We sent a message to the address you gave. Follow the link in it within 24 hours to confirm that the address is yours.</p>
        <p class="hint">
          Until then partner sites see nothing of your account. Nothing there? Look in your spam folder, or log in and ask for the link again. If the address
          already has an account, the message says so instead.
        </p>
        <p class="actions">
          <a class="button" href="/login">
            Log in
          </a>
        </p>
      </div>
    </Layout>
  );
}

export function ConfirmLinkPage(p: { csrf: string; token: string; userId: string; holderUserId?: string | null }) {
  const claim = p.holderUserId !== undefined;
  // A claim gives the address to a new sign-up: its page must not read like an ordinary confirmation.
  const title = claim ? 'A second sign-up asks for this address' : 'Confirm your e-mail address';
  return (
    <Layout title={title} narrow>
      <div class="card form-card" data-page={claim ? 'claim' : 'confirm'}>
        <h1>{title}</h1>
        {claim ? (
          <p>
            Confirming creates your account <strong class="user-id">{p.userId}</strong> with this address.
            {p.holderUserId ? (
              <>
                {' '}
                The account <strong class="user-id">{p.holderUserId}</strong>, which gave the same address but never confirmed it, is removed.
              </>
            ) : null}
          </p>
        ) : (
          <p>
            Confirm that this address belongs to the account <strong class="user-id">{p.userId}</strong>. Partner sites can then find the account (if you chose
            to be visible), and what they stored about this address becomes part of it.
          </p>
        )}
        <form method="post" action="/confirm">
          <CsrfField token={p.csrf} />
          <input type="hidden" name="token" value={p.token} />
          <button type="submit" class="button wide">
            {claim ? `Confirm and create ${p.userId}` : 'Confirm my address'}
          </button>
        </form>
        <p class="form-foot">Did not sign up? Close this page: nothing happens without the button.</p>
      </div>
    </Layout>
  );
}

export function LinkProblemPage(p: { title: string; message: string }) {
  return (
    <Layout title={p.title} narrow>
      <div class="card form-card" data-page="link-problem">
        <h1>{p.title}</h1>
        <p>{p.message}</p>
        <p class="actions">
          <a class="button" href="/login">
            Log in
          </a>{' '}
          <a class="button secondary" href="/signup">
            Sign up
          </a>
        </p>
      </div>
    </Layout>
  );
}

export function ConfirmEmailChangePage(p: { csrf: string; token: string; userId: string; newEmail: string }) {
  return (
    <Layout title="Confirm your new e-mail address" narrow>
      <div class="card form-card" data-page="confirm-email-change">
        <h1>Confirm your new e-mail address</h1>
        <p>
          The account <strong class="user-id">{p.userId}</strong> will use <strong>{p.newEmail}</strong> from now on. Partner sites then find it by this
          address, no longer by the old one, and what they stored about this address becomes part of it. Its other sessions end.
        </p>
        <form method="post" action="/email/confirm">
          <CsrfField token={p.csrf} />
          <input type="hidden" name="token" value={p.token} />
          <button type="submit" class="button wide">
            Use this address
          </button>
        </form>
        <p class="form-foot">Did not ask for this? Close this page: nothing happens without the button.</p>
      </div>
    </Layout>
  );
}
