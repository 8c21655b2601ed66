// The identities section of the account page: the list with verified marks, last check and
// actions; the add form with the service picker and URL preview; how to verify.
import type { CatalogueEntry } from '../../catalogue/catalogue-file.js';
import { patternAdvice } from '../../catalogue/pattern-text.js';
import type { AccountData, IdentityView } from '../account-data.js';
import { CsrfField } from './fields.js';
import { When } from './Layout.js';
import { METHOD_TEXT, OUTCOME_TEXT } from './outcomes.js';
import { LastCheck, MarkEvidenceLine, OtherMethods, PendingRemoval } from './VerificationEvidence.js';
import type { VerificationMethod } from '../../verification/methods.js';

export interface IdentityFormState {
  svcId?: string;
  usrSvcId?: string;
  error?: string;
  /** The entry whose change form failed, or undefined for the add form. */
  changing?: string;
  /** A pasted profile URL, and what it was read as (the user confirms by adding). */
  profileUrl?: string;
  recognised?: string;
  /** Set when the add form named a service that already has an identity: asks before replacing it. */
  replacing?: { svcName: string; old: string };
}

function ReplaceQuestion({ form, csrf }: { form: IdentityFormState; csrf: string }) {
  const { replacing, svcId = '', usrSvcId = '' } = form;
  if (!replacing) return null;
  return (
    <div class="alert info" role="alert" id="replace-question">
      <p>
        You already have “{replacing.old}” on {replacing.svcName}, and each service holds one name. Replace it with “{usrSvcId}”?
      </p>
      <form method="post" action="/account/identities" class="inline-form">
        <CsrfField token={csrf} />
        <input type="hidden" name="svc_id" value={svcId} />
        <input type="hidden" name="usr_svc_id" value={usrSvcId} />
        <input type="hidden" name="replace" value="1" />
        <button type="submit" class="button small">
          Replace with “{usrSvcId}”
        </button>{' '}
        <a class="button small ghost" href={`/account#identity-${svcId}`}>
          Keep “{replacing.old}”
        </a>
      </form>
    </div>
  );
}

function ServiceOptions({ list, withData, selected }: { list: readonly CatalogueEntry[]; withData: boolean; selected?: string | undefined }) {
  return (
    <>
      {list.map((s) => (
        <option
          key={s.svcId}
          value={s.svcId}
          selected={withData && s.svcId === selected}
          {...(withData
            ? {
                'data-left': s.svcLeftURL,
                'data-right': s.svcRightURL,
                ...(s.urlBuilder ? { 'data-builder': s.urlBuilder } : {}),
                ...(s.regexCheck ? { 'data-pattern': s.regexCheck, 'data-pattern-help': patternAdvice(s.regexCheck, s.svcName) } : {}),
              }
            : {})}
        >
          {s.svcName}
        </option>
      ))}
    </>
  );
}

function VerifiedBadge({ i }: { i: IdentityView }) {
  if (i.verified) {
    return (
      <span class="badge verified" title={`Verified by ${METHOD_TEXT[i.verifiedBy as VerificationMethod] ?? 'a check'}`}>
        <span aria-hidden="true">✓ </span>Verified
      </span>
    );
  }
  return <span class="badge muted">Not verified</span>;
}

function IdentityItem({
  i,
  csrf,
  form,
  justChecked,
  confirmAfterMs,
}: {
  i: IdentityView;
  csrf: string;
  form: IdentityFormState;
  justChecked: boolean;
  confirmAfterMs: number;
}) {
  const changing = form.changing === i.svcId;
  return (
    <li class="identity" id={`identity-${i.svcId}`}>
      <div class="identity-main">
        <span class="service-mark" aria-hidden="true">
          {i.svcName.slice(0, 1).toUpperCase()}
        </span>
        <div class="identity-text">
          <h3 class="identity-title">
            {i.svcName} <VerifiedBadge i={i} />
          </h3>
          <p class="identity-id">
            {i.url ? (
              <a href={i.url} rel="noopener noreferrer">
                {i.url}
              </a>
            ) : (
              <span>{i.usrSvcId}</span>
            )}
          </p>
          {!i.fitsPattern ? <p class="hint warn">This does not look like a usual {i.svcName} name; check it for typos.</p> : null}
          {i.sourcePartner ? <p class="hint">Added by {i.sourcePartner}</p> : null}
          <MarkEvidenceLine i={i} />
          <PendingRemoval i={i} confirmAfterMs={confirmAfterMs} />
          <LastCheck attempts={i.lastCheck} justChecked={justChecked} />
        </div>
      </div>
      <div class="identity-actions">
        <form method="post" action="/account/identities/verify" class="inline-form">
          <CsrfField token={csrf} />
          <input type="hidden" name="svc_id" value={i.svcId} />
          <button type="submit" class="button small secondary" aria-label={`Verify ${i.svcName} now`}>
            Verify now
          </button>
        </form>
        <details class="change" open={changing}>
          <summary class="button small ghost">
            Change<span class="visually-hidden"> {i.svcName}</span>
          </summary>
          <form method="post" action="/account/identities" class="change-form">
            <CsrfField token={csrf} />
            <input type="hidden" name="svc_id" value={i.svcId} />
            <input type="hidden" name="replace" value="1" />
            <label for={`change-${i.svcId}`}>Your name on {i.svcName}</label>
            {changing && form.error ? (
              <p class="field-error" id={`change-${i.svcId}-error`}>
                {form.error}
              </p>
            ) : null}
            <div class="input-row">
              <input
                id={`change-${i.svcId}`}
                name="usr_svc_id"
                value={changing ? form.usrSvcId : i.usrSvcId}
                required
                maxLength={255}
                spellcheck={false}
                autocomplete="off"
                aria-invalid={changing && form.error ? 'true' : undefined}
                aria-describedby={changing && form.error ? `change-${i.svcId}-error` : undefined}
              />
              <button type="submit" class="button small">
                Save
              </button>
            </div>
          </form>
        </details>
        <form method="post" action="/account/identities/remove" class="inline-form">
          <CsrfField token={csrf} />
          <input type="hidden" name="svc_id" value={i.svcId} />
          <button type="submit" class="button small danger-ghost" aria-label={`Remove ${i.svcName}`}>
            Remove
          </button>
        </form>
      </div>
    </li>
  );
}

export function IdentitiesSection({ data, csrf, form, checked }: { data: AccountData; csrf: string; form: IdentityFormState; checked?: string | undefined }) {
  const adding = form.changing === undefined;
  return (
    <section class="card" aria-labelledby="identities-title" id="identities">
      <h2 id="identities-title">Your identities</h2>
      {data.identities.length === 0 ? (
        <p class="empty">No identities yet. Add the first one below.</p>
      ) : (
        <ul class="identity-list">
          {data.identities.map((i) => (
            <IdentityItem key={i.svcId} i={i} csrf={csrf} form={form} justChecked={checked === i.svcId} confirmAfterMs={data.confirmAfterMs} />
          ))}
        </ul>
      )}

      <h3 id="add-title">Add an identity</h3>
      <ReplaceQuestion form={form} csrf={csrf} />
      <form method="post" action="/account/identities" class="add-identity" aria-labelledby="add-title" novalidate>
        <CsrfField token={csrf} />
        {adding && form.error ? (
          <p class="field-error" id="add-error" role="alert">
            {form.error}
          </p>
        ) : null}
        <div class="field">
          <label for="profile_url">Paste the address of your profile</label>
          <div class="input-row">
            <input
              id="profile_url"
              name="profile_url"
              type="url"
              maxLength={2048}
              spellcheck={false}
              autocomplete="off"
              placeholder="https://github.com/you"
              value={adding ? form.profileUrl : ''}
              data-recognise="/account/identities/recognise"
              aria-describedby="recognised"
            />
            <button type="submit" name="recognise" value="1" class="button small secondary">
              Fill in
            </button>
          </div>
          <p class="hint" id="recognised" aria-live="polite" data-recognised>
            {adding && form.recognised ? form.recognised : 'or choose the service and type your name there:'}
          </p>
        </div>
        <div class="grid-2">
          <div class="field">
            <label for="svc_id">Service</label>
            <input
              type="search"
              class="service-filter"
              data-filter-for="svc_id"
              placeholder="Type to filter services…"
              aria-label="Filter the list of services"
              hidden
            />
            <select id="svc_id" name="svc_id" required data-preview-select>
              <option value="">Choose a service…</option>
              <optgroup label="Most used">
                <ServiceOptions list={data.popular} withData={false} />
              </optgroup>
              <optgroup label="All services, A–Z">
                <ServiceOptions list={data.services} withData selected={adding ? form.svcId : undefined} />
              </optgroup>
            </select>
          </div>
          <div class="field">
            <label for="usr_svc_id">Your name there</label>
            <input
              id="usr_svc_id"
              name="usr_svc_id"
              required
              maxLength={255}
              spellcheck={false}
              autocomplete="off"
              value={adding ? form.usrSvcId : ''}
              data-preview-input
              aria-describedby="url-preview"
              aria-invalid={adding && form.error ? 'true' : undefined}
            />
          </div>
        </div>
        <p class="preview" id="url-preview" aria-live="polite" data-preview-output>
          Pick a service and type your name there to see the address of your profile.
        </p>
        <button type="submit" class="button">
          Add identity
        </button>
      </form>

      <details class="howto">
        <summary>How do I verify an identity?</summary>
        <p>
          Put a link to your public page on your profile on that service, marked <code>rel="me"</code>. Many services do this for the “website” field of your
          profile; on your own site, add:
        </p>
        <pre>
          <code data-copy>{`<a rel="me" href="${data.profileUrl}">My identities</a>`}</code>
        </pre>
        <p>Then press “Verify now”. We also check every entry once a day, and remove the mark if the link disappears.</p>
        <OtherMethods profileUrl={data.profileUrl} shortProof={data.shortProof} />
        <p>
          On GitHub, GitLab, Mastodon, Bluesky, Hacker News, Reddit and other services you can instead put your proof text in your bio:{' '}
          <a href="/account/proofs">prove them with a proof text</a>.
        </p>
      </details>
    </section>
  );
}

export function AttemptsSection({ data }: { data: AccountData }) {
  if (data.attempts.length === 0) return null;
  return (
    <section class="card" aria-labelledby="attempts-title" id="checks">
      <h2 id="attempts-title">Recent checks</h2>
      <div class="table-wrap">
        <table class="stack">
          <caption class="visually-hidden">The last {data.attempts.length} verification checks of your identities</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Service</th>
              <th scope="col">Result</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {data.attempts.map((a, n) => (
              <tr key={n}>
                <td data-label="When">
                  <When ms={a.at} />
                </td>
                <td data-label="Service">{a.svcName}</td>
                <td data-label="Result">
                  <span class={a.outcome === 'verified' ? 'badge verified' : 'badge warn'}>{OUTCOME_TEXT[a.outcome]}</span>
                </td>
                <td class="detail" data-label="Why">
                  {a.detail}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
