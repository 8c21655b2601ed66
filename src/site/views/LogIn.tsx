import { CsrfField, TextField } from './fields.js';
import { ErrorSummary, Layout, Notice } from './Layout.js';
import { PasskeyLogInForm, PasskeyScripts } from './Passkeys.js';
import { ProviderButtons, type ProviderButton } from './Providers.js';

export function LogInPage(p: {
  csrf: string;
  login?: string;
  errors?: Record<string, string>;
  notice?: string | undefined;
  passkeys?: boolean;
  providers?: readonly ProviderButton[];
}) {
  const e = p.errors ?? {};
  return (
    <Layout title="Log in" narrow head={p.passkeys ? <PasskeyScripts /> : undefined}>
      <div class="card form-card">
        <h1>Log in</h1>
        {p.notice ? <Notice kind="success">{p.notice}</Notice> : null}
        <ErrorSummary errors={e} />
        <form method="post" action="/login" novalidate>
          <CsrfField token={p.csrf} />
          <TextField name="login" label="E-mail address or userId" autocomplete="username" required value={p.login} error={e.login} spellcheck={false} />
          <TextField
            name="password"
            label="Password"
            type="password"
            autocomplete="current-password"
            required
            error={e.password}
            extra={{ 'data-password': '' }}
          />
          <button type="submit" class="button wide">
            Log in
          </button>
        </form>
        {p.passkeys ? <PasskeyLogInForm csrf={p.csrf} /> : null}
        <ProviderButtons providers={p.providers ?? []} csrf={p.csrf} purpose="login" verb="Log in with" />
        <p class="form-foot">
          <a href="/forgot">Forgot your password?</a> · New here? <a href="/signup">Create an account</a>
        </p>
      </div>
    </Layout>
  );
}
