// The other sections of the account page: visibility, profile, links, data.
import { parsePublicFields, PROFILE_FIELDS, PROFILE_MAX_LENGTH, type ProfileField } from '../../domain/profile.js';
import type { AccountData } from '../account-data.js';
import { Checkbox, CsrfField } from './fields.js';
import { cacheDelay, DISCOVERABLE_ADDS, NOT_VISIBLE, OPT_IN_REACH } from './consent.js';
import { Day } from './Layout.js';

export function VisibilitySection({ data, csrf }: { data: AccountData; csrf: string }) {
  // The consent is the user's choice; it takes effect once the address is proven (users.opted_in).
  const on = data.user.consented;
  const visible = data.user.opted_in;
  const discoverable = data.user.discoverable;
  // Two separate consents, each said as what it lets others do (views/consent.ts): opting in lets
  // those who know your address, its hash or your userId see you; being discoverable adds the paths
  // that find you by other means.
  return (
    <section class={visible ? 'card visibility on' : 'card visibility off'} aria-labelledby="visibility-title" id="visibility">
      <h2 id="visibility-title">Sharing</h2>
      <div class="visibility-row">
        <div>
          <h3 class="sharing-part">Opt-in</h3>
          <p class="visibility-state" data-opted-in={on ? 'yes' : 'no'} data-visible={visible ? 'yes' : 'no'}>
            <span class="dot" aria-hidden="true" />
            {visible ? 'You are opted in.' : on ? 'You will be visible once you confirm your e-mail address.' : 'You are hidden.'}
          </p>
          <p class="hint">
            Opting in means: {OPT_IN_REACH} Your page <a href={`/u/${data.user.user_id}`}>{data.profileUrl}</a> is online, and WebFinger finds it by your userId
            (<code>acct:</code>).
          </p>
          {on ? <p class="hint cache-delay">{cacheDelay(data.publicCacheSeconds)}</p> : null}
          {on && !visible ? <p class="hint">Until your address is confirmed, {NOT_VISIBLE}.</p> : null}
          {on ? null : <p class="hint">Now {NOT_VISIBLE}, not even sites you connected. What they stored themselves stays theirs.</p>}
        </div>
        <form method="post" action="/account/opt-in" class="inline-form">
          <CsrfField token={csrf} />
          <input type="hidden" name="opt_in" value={on ? '0' : '1'} />
          <button type="submit" class={on ? 'button secondary' : 'button'}>
            {on ? 'Opt out' : 'Opt in'}
          </button>
        </form>
      </div>
      <div class="visibility-row discoverable-row">
        <div>
          <h3 class="sharing-part">Discoverable</h3>
          <p class="discoverable-state" data-discoverable={discoverable ? 'yes' : 'no'}>
            {discoverable ? (on ? 'You are discoverable.' : 'You are discoverable once you opt in.') : 'You are not discoverable.'}
          </p>
          <p class="hint">
            Discoverable adds more ways to find you: {DISCOVERABLE_ADDS} It is off until you turn it on, and applies only while you are opted in.
          </p>
        </div>
        <form method="post" action="/account/discoverable" class="inline-form">
          <CsrfField token={csrf} />
          {discoverable ? null : <input type="hidden" name="discoverable" value="1" />}
          <button type="submit" class="button secondary">
            {discoverable ? 'Stop being discoverable' : 'Make me discoverable'}
          </button>
        </form>
      </div>
    </section>
  );
}

const FIELD_LABELS: Record<ProfileField, string> = {
  nickname: 'Nickname',
  firstName: 'First name',
  lastName: 'Last name',
  street: 'Street',
  city: 'City',
  region: 'Region',
  country: 'Country',
  bio: 'About you',
};

const AUTOCOMPLETE: Partial<Record<ProfileField, string>> = {
  nickname: 'nickname',
  firstName: 'given-name',
  lastName: 'family-name',
  street: 'street-address',
  city: 'address-level2',
  region: 'address-level1',
  country: 'country-name',
};

export function ConfirmAddressSection({ data, csrf, expiresAt }: { data: AccountData; csrf: string; expiresAt: number }) {
  return (
    <section class="card confirm-address" aria-labelledby="confirm-title" id="confirm-address" data-unconfirmed="yes">
      <h2 id="confirm-title">Confirm your e-mail address</h2>
      <p>
        We sent a link to <strong>{data.user.email}</strong>. Follow it to confirm that the address is yours. Until then partner sites see nothing of this
        account, cannot connect to it, and nothing they stored about the address is added to it.
      </p>
      <p class="hint">
        The link works for 24 hours. An account whose address is not confirmed is removed on <Day ms={expiresAt} />, and someone else who proves the address
        first gets it.
      </p>
      <form method="post" action="/account/confirm/resend" class="inline-form">
        <CsrfField token={csrf} />
        <button type="submit" class="button small">
          Send the link again
        </button>
      </form>
    </section>
  );
}

export interface EmailFormState {
  newEmail?: string;
  error?: string;
}

export function EmailSection({ data, csrf, form }: { data: AccountData; csrf: string; form: EmailFormState }) {
  return (
    <section class="card" aria-labelledby="email-title" id="email">
      <h2 id="email-title">E-mail address</h2>
      <p>
        Your address is <strong>{data.user.email}</strong>.
      </p>
      <p class="hint">
        To change it, we mail a link to the new address; nothing changes until it is followed (within 24 hours), and your current address is told. Partner sites
        then find you by the new address, no longer by the old one; your connected sites and what they stored stay with your account. Your other sessions end.
      </p>
      {form.error ? (
        <p class="field-error" role="alert">
          {form.error}
        </p>
      ) : null}
      <form method="post" action="/account/email" class="email-form">
        <CsrfField token={csrf} />
        <div class="field">
          <label for="new_email">New e-mail address</label>
          <input id="new_email" name="new_email" type="email" autocomplete="email" required maxLength={254} value={form.newEmail ?? ''} />
        </div>
        <div class="field">
          <label for="email_current_password">Current password</label>
          <input id="email_current_password" name="current_password" type="password" autocomplete="current-password" required data-password="" />
        </div>
        <button type="submit" class="button">
          Change e-mail address
        </button>
      </form>
    </section>
  );
}

export function PasswordSection({ csrf, error }: { csrf: string; error?: string | undefined }) {
  return (
    <section class="card" aria-labelledby="password-title" id="password">
      <h2 id="password-title">Password</h2>
      <p class="hint">Changing it ends your other sessions, and we mail you a notice.</p>
      {error ? (
        <p class="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <form method="post" action="/account/password" class="password-form">
        <CsrfField token={csrf} />
        <div class="field">
          <label for="current_password">Current password</label>
          <input id="current_password" name="current_password" type="password" autocomplete="current-password" required data-password="" />
        </div>
        <div class="field">
          <label for="new_password">New password</label>
          <input id="new_password" name="new_password" type="password" autocomplete="new-password" required minLength={8} data-password="" />
        </div>
        <button type="submit" class="button">
          Change password
        </button>
      </form>
    </section>
  );
}

export function ProfileSection({ data, csrf, error }: { data: AccountData; csrf: string; error?: string | undefined }) {
  const pub = new Set(parsePublicFields(data.user.public_fields));
  return (
    <section class="card" aria-labelledby="profile-title" id="profile">
      <h2 id="profile-title">Profile</h2>
      <p class="hint">
        Everything is optional. A field marked <strong>public</strong> appears on your public page and to every partner site while you are visible (names, place
        and bio also in your Gravatar-compatible profile); the others only to sites you connected.
      </p>
      {error ? (
        <p class="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <form method="post" action="/account/profile" class="profile-form">
        <CsrfField token={csrf} />
        {PROFILE_FIELDS.map(([field, column]) => (
          <div class={field === 'bio' ? 'profile-field wide' : 'profile-field'} key={field}>
            <label for={`pf-${field}`}>{FIELD_LABELS[field]}</label>
            {field === 'bio' ? (
              <textarea id={`pf-${field}`} name={field} rows={4} maxLength={PROFILE_MAX_LENGTH[field]}>
                {data.user[column] ?? ''}
              </textarea>
            ) : (
              <input id={`pf-${field}`} name={field} value={data.user[column] ?? ''} maxLength={PROFILE_MAX_LENGTH[field]} autocomplete={AUTOCOMPLETE[field]} />
            )}
            <label class="public-toggle">
              <input type="checkbox" name={`public_${field}`} value="1" checked={pub.has(field)} /> public
              <span class="visually-hidden"> ({FIELD_LABELS[field]})</span>
            </label>
          </div>
        ))}
        <button type="submit" class="button">
          Save profile
        </button>
      </form>
    </section>
  );
}

export function LinksSection({ data, csrf }: { data: AccountData; csrf: string }) {
  return (
    <section class="card" aria-labelledby="links-title" id="links">
      <h2 id="links-title">Connected sites</h2>
      {data.links.length === 0 ? (
        <p class="empty">
          No sites are connected. When a site that works with idsvc asks you to connect your account, it appears here and you can end the link at any time.
        </p>
      ) : (
        <ul class="link-list">
          {data.links.map((l) => (
            <li class="link-item" key={l.partnerId} data-partner={l.partnerName}>
              <div>
                <h3>{l.partnerName}</h3>
                <p class="hint">
                  Connected on <Day ms={l.linkedAt} />. It sees all your identities and profile fields, and what you change there flows here.
                </p>
              </div>
              <form method="post" action="/account/links/end" class="end-link">
                <CsrfField token={csrf} />
                <input type="hidden" name="partner_id" value={String(l.partnerId)} />
                <Checkbox
                  id={`remove-added-${l.partnerId}`}
                  name="remove_added"
                  label={
                    l.addedCount > 0
                      ? `Also remove the ${l.addedCount === 1 ? 'identity' : `${l.addedCount} identities`} ${l.partnerName} added (unless you verified them)`
                      : `Also remove what ${l.partnerName} added (nothing at the moment)`
                  }
                />
                <button type="submit" class="button small danger-ghost">
                  End link<span class="visually-hidden"> with {l.partnerName}</span>
                </button>
              </form>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function DataSection({ data, csrf, deleteError }: { data: AccountData; csrf: string; deleteError?: string | undefined }) {
  return (
    <section class="card" aria-labelledby="data-title" id="data">
      <h2 id="data-title">Your data</h2>
      <div class="data-row">
        <div>
          <h3>Download</h3>
          <p class="hint">Everything we hold about you — account, profile, identities, checks, connected sites — as one JSON file.</p>
        </div>
        <form method="post" action="/account/export" class="inline-form">
          <CsrfField token={csrf} />
          <button type="submit" class="button secondary">
            Download my data
          </button>
        </form>
      </div>
      <details class="danger-zone" open={Boolean(deleteError)}>
        <summary>Delete your account</summary>
        <p>This erases your account, your identities and your links for good. Connected sites are told that you left. It cannot be undone.</p>
        <form method="post" action="/account/delete" novalidate>
          <CsrfField token={csrf} />
          <div class={deleteError ? 'field has-error' : 'field'}>
            <label for="confirm_user_id">
              To confirm, type your userId, <strong>{data.user.user_id}</strong>
            </label>
            {deleteError ? (
              <p class="field-error" id="confirm-error">
                {deleteError}
              </p>
            ) : null}
            <input
              id="confirm_user_id"
              name="confirm_user_id"
              autocomplete="off"
              spellcheck={false}
              required
              data-confirm={data.user.user_id}
              aria-invalid={deleteError ? 'true' : undefined}
              aria-describedby={deleteError ? 'confirm-error' : undefined}
            />
          </div>
          <button type="submit" class="button danger">
            Delete my account
          </button>
        </form>
      </details>
    </section>
  );
}
