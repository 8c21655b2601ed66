// "Forgot password": ask for a link, "check your inbox", and the page the link opens.
import { PASSWORD_MIN, PASSWORD_RECOMMENDED } from '../../domain/password-rules.js';
import { CsrfField, TextField } from './fields.js';
import { ErrorSummary, Layout } from './Layout.js';

export function ForgotPage(p: { csrf: string; email?: string; errors?: Record<string, string> }) {
  const e = p.errors ?? {};
  return (
    <Layout title="Forgot your password?" narrow>
      <div class="card form-card" data-page="forgot">
        <h1>Forgot your password?</h1>
        <p class="lead small">Give the e-mail address of your account. We mail you a link to set a new password.</p>
        <ErrorSummary errors={e} />
        <form method="post" action="/forgot" novalidate>
          <CsrfField token={p.csrf} />
          <TextField name="email" label="E-mail address" type="email" autocomplete="email" required value={p.email} error={e.email} spellcheck={false} />
          <button type="submit" class="button wide">
            Mail me a link
          </button>
        </form>
        <p class="form-foot">
          Remembered it? <a href="/login">Log in</a>
        </p>
      </div>
    </Layout>
  );
}

export function ForgotSentPage() {
  return (
    <Layout title="Check your inbox" narrow>
      <div class="card form-card" data-page="forgot-sent">
        <h1>Check your inbox</h1>
        <p>If an account has that address, we sent it a link to set a new password. The link works once, for an hour.</p>
        <p class="hint">Nothing there? Look in your spam folder, or check that you typed the address of your account.</p>
      </div>
    </Layout>
  );
}

export function ResetPage(p: { csrf: string; token: string; userId: string; errors?: Record<string, string> }) {
  const e = p.errors ?? {};
  return (
    <Layout title="Set a new password" narrow>
      <div class="card form-card" data-page="reset">
        <h1>Set a new password</h1>
        <p>
          For the account <strong class="user-id">{p.userId}</strong>. Every session of the account ends: you log in again with the new password.
        </p>
        <ErrorSummary errors={e} />
        <form method="post" action="/reset" novalidate>
          <CsrfField token={p.csrf} />
          <input type="hidden" name="token" value={p.token} />
          <TextField
            name="password"
            label="New password"
            type="password"
            autocomplete="new-password"
            required
            minLength={PASSWORD_MIN}
            error={e.password}
            extra={{ 'data-password': '' }}
            hint={`At least ${PASSWORD_MIN} characters; ${PASSWORD_RECOMMENDED} or more is better.`}
          />
          <button type="submit" class="button wide">
            Set the new password
          </button>
        </form>
      </div>
    </Layout>
  );
}
