import { PASSWORD_MIN, PASSWORD_RECOMMENDED } from '../../domain/password-rules.js';
import { Checkbox, CsrfField, TextField } from './fields.js';
import { DISCOVERABLE_ADDS_SHORT, NOT_VISIBLE, OPT_IN_REACH } from './consent.js';
import { ErrorSummary, Layout } from './Layout.js';
import { ProviderButtons, type ProviderButton } from './Providers.js';

export interface SignUpValues {
  email?: string;
  user_id?: string;
  opt_in?: boolean;
}

export function SignUpPage(p: {
  csrf: string;
  baseUrl: string;
  values?: SignUpValues;
  errors?: Record<string, string>;
  providers?: readonly ProviderButton[];
}) {
  const v = p.values ?? {};
  const e = p.errors ?? {};
  return (
    <Layout title="Create your account" narrow>
      <div class="card form-card">
        <h1>Create your account</h1>
        <p class="lead small">It takes a minute. You decide later what anyone else may see.</p>
        <ErrorSummary errors={e} />
        <form method="post" action="/signup" novalidate>
          <CsrfField token={p.csrf} />
          <TextField
            name="email"
            label="E-mail address"
            type="email"
            autocomplete="email"
            required
            value={v.email}
            error={e.email}
            spellcheck={false}
            hint="We mail a link to it to confirm it is yours. It is for logging in and for our mail, and is never shown on your profile."
          />
          <TextField
            name="user_id"
            label="Choose a userId"
            autocomplete="username"
            required
            minLength={3}
            maxLength={30}
            pattern="[a-z0-9_]{3,30}"
            value={v.user_id}
            error={e.user_id}
            spellcheck={false}
            hint={
              <>
                3–30 lower-case letters, digits or _. It becomes your public address, <span class="nowrap">{p.baseUrl}/u/…</span>, and cannot be changed later.
              </>
            }
          />
          <TextField
            name="password"
            label="Password"
            type="password"
            autocomplete="new-password"
            required
            minLength={PASSWORD_MIN}
            error={e.password}
            extra={{ 'data-password': '' }}
            hint={`At least ${PASSWORD_MIN} characters; ${PASSWORD_RECOMMENDED} or more is better. Common passwords, patterns like "abcd1234" and your own names are refused: a few unrelated words make a strong, memorable passphrase.`}
          />
          <fieldset class="consent">
            <legend>Sharing</legend>
            <Checkbox
              name="opt_in"
              checked={v.opt_in}
              label="Show my identities and public profile on my public page, and to anyone who knows my userId or my email"
              hint={`This is your opt-in: once your address is confirmed, ${OPT_IN_REACH} Without it your account still works, but ${NOT_VISIBLE}. More ways to find you (discoverable: ${DISCOVERABLE_ADDS_SHORT}) are a separate choice, off until you turn it on in your account. You can change both at any time.`}
            />
          </fieldset>
          <button type="submit" class="button wide">
            Create account
          </button>
        </form>
        <ProviderButtons providers={p.providers ?? []} csrf={p.csrf} purpose="login" verb="Sign up with" />
        <p class="form-foot">
          Already have an account? <a href="/login">Log in</a>
        </p>
      </div>
    </Layout>
  );
}
