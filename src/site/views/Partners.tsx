// The partner area: the person's partners and applications, the application form, and the
// invitation page. The dashboard of one partner is PartnerDashboard.tsx.
import type { Application } from '../../repositories/partner-applications.js';
import type { Membership } from '../../repositories/partner-members.js';
import { CsrfField, TextField } from './fields.js';
import { Day, ErrorSummary, Layout, Notice, type Viewer } from './Layout.js';

const STATUS_TEXT: Record<Application['status'], string> = { pending: 'Waiting for review', approved: 'Approved', declined: 'Declined' };

export function PartnersHome(p: { viewer: Viewer; memberships: Membership[]; applications: Application[]; notice?: string | undefined; proven: boolean }) {
  return (
    <Layout title="Your partners" viewer={p.viewer}>
      <h1>Your partners</h1>
      {p.notice ? <Notice kind="success">{p.notice}</Notice> : null}
      <section class="card" aria-labelledby="partners-title">
        <h2 id="partners-title">Partners you run</h2>
        {p.memberships.length === 0 ? (
          <p class="empty">You are a member of no partner yet.</p>
        ) : (
          <ul class="link-list">
            {p.memberships.map((m) => (
              <li key={m.partnerId} class="link-item">
                <a href={`/partners/${m.partnerId}`}>{m.name}</a>
                {m.suspended ? <span class="badge warn">suspended</span> : null}
              </li>
            ))}
          </ul>
        )}
        <p class="actions">
          {p.proven ? (
            <a class="button" href="/partners/apply">
              Apply for keys
            </a>
          ) : (
            <span class="hint">Confirm your e-mail address to apply for keys.</span>
          )}
        </p>
      </section>
      {p.applications.length > 0 ? (
        <section class="card" aria-labelledby="applications-title">
          <h2 id="applications-title">Your applications</h2>
          <div class="table-wrap">
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Application</th>
                  <th scope="col">Sent</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {p.applications.map((a) => (
                  <tr key={a.id} data-application={a.id}>
                    <td data-label="Name">{a.name}</td>
                    <td data-label="Sent">
                      <Day ms={a.createdAt} />
                    </td>
                    <td data-label="Status" class="application-status">
                      {STATUS_TEXT[a.status]}
                      {a.status === 'declined' && a.declineReason ? `: ${a.declineReason}` : ''}
                      {a.status === 'approved' && a.partnerId !== null ? (
                        <>
                          {' '}
                          (<a href={`/partners/${a.partnerId}`}>open</a>)
                        </>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}
    </Layout>
  );
}

export interface ApplyForm {
  name?: string;
  site_url?: string;
  purpose?: string;
  origins?: string;
  contact?: string;
}

export function ApplyPage(p: { viewer: Viewer; form: ApplyForm; errors: Record<string, string> }) {
  const f = p.form;
  return (
    <Layout title="Apply for partner keys" viewer={p.viewer} narrow>
      <h1>Apply for partner keys</h1>
      <p>
        Keys let your application read and add the identities people choose to share (see the <a href="/docs">API documentation</a>). An operator reviews each
        application; you hear from us by mail either way.
      </p>
      <ErrorSummary errors={p.errors} />
      <form method="post" action="/partners/apply" class="card" novalidate>
        <CsrfField token={p.viewer.csrf} />
        <TextField name="name" label="Your application's name" value={f.name} error={p.errors.name} required maxLength={100} />
        <TextField
          name="site_url"
          label="Its site"
          type="url"
          value={f.site_url}
          error={p.errors.site_url}
          required
          maxLength={500}
          hint="For example https://example.com"
        />
        <div class={p.errors.purpose ? 'field has-error' : 'field'}>
          <label for="purpose">What it will do with people's identities</label>
          {p.errors.purpose ? (
            <p class="field-error" id="purpose-error">
              {p.errors.purpose}
            </p>
          ) : null}
          <textarea
            id="purpose"
            name="purpose"
            rows={4}
            maxLength={2000}
            required
            aria-invalid={p.errors.purpose ? 'true' : undefined}
            aria-describedby={p.errors.purpose ? 'purpose-error' : undefined}
          >
            {f.purpose ?? ''}
          </textarea>
        </div>
        <div class={p.errors.origins ? 'field has-error' : 'field'}>
          <label for="origins">Origins that will embed the widget</label>
          <p class="hint" id="origins-hint">
            One per line, such as https://example.com. Leave empty if you will not use the widget.
          </p>
          {p.errors.origins ? (
            <p class="field-error" id="origins-error">
              {p.errors.origins}
            </p>
          ) : null}
          <textarea
            id="origins"
            name="origins"
            rows={3}
            maxLength={4000}
            aria-describedby={p.errors.origins ? 'origins-hint origins-error' : 'origins-hint'}
            aria-invalid={p.errors.origins ? 'true' : undefined}
          >
            {f.origins ?? ''}
          </textarea>
        </div>
        <TextField
          name="contact"
          label="Contact"
          value={f.contact}
          error={p.errors.contact}
          required
          maxLength={200}
          hint="Who the operators may write to about it: a name and an address."
        />
        <p class="actions">
          <button type="submit" class="button">
            Send the application
          </button>
        </p>
      </form>
    </Layout>
  );
}

export function InvitationPage(p: { viewer: Viewer; token: string; error?: string | undefined }) {
  return (
    <Layout title="Invitation to a partner" viewer={p.viewer} narrow>
      <h1>Invitation to a partner</h1>
      {p.error ? (
        <Notice kind="error">{p.error}</Notice>
      ) : (
        <form method="post" action="/partners/invitation" class="card">
          <CsrfField token={p.viewer.csrf} />
          <input type="hidden" name="token" value={p.token} />
          <p>Accept to become a member: you will see the partner's keys, webhooks and linked users, and can change them.</p>
          <p class="actions">
            <button type="submit" class="button">
              Accept the invitation
            </button>
          </p>
        </form>
      )}
    </Layout>
  );
}
