// One partner's dashboard, for its members: keys and origins, webhook, members, linked users, usage.
import type { OutboxRow } from '../../repositories/outbox.js';
import type { UsageSeries } from '../../services/usage.js';
import { UsageCharts } from './UsageCharts.js';
import type { LinkEvent } from '../../repositories/partner-link-events.js';
import type { Member } from '../../repositories/partner-members.js';
import { allowedOrigins, tokenStamp, type Partner } from '../../repositories/partners.js';
import type { PingResult } from '../../services/webhook-ping.js';
import { CsrfField, TextField } from './fields.js';
import { Layout, Notice, When, type Viewer } from './Layout.js';

export const DASHBOARD_PAGES = [
  { page: 'keys', suffix: '', label: 'Keys', title: 'Keys and origins' },
  { page: 'webhook', suffix: '/webhook', label: 'Webhook', title: 'Webhook' },
  { page: 'members', suffix: '/members', label: 'Members', title: 'Members' },
  { page: 'links', suffix: '/links', label: 'Linked users', title: 'Linked users' },
  { page: 'usage', suffix: '/usage', label: 'Usage', title: 'Usage' },
] as const;

export type DashboardPageName = (typeof DASHBOARD_PAGES)[number]['page'];

export interface DashboardData {
  partner: Partner;
  members: Member[];
  deliveries: OutboxRow[];
  linkedPeople: number;
  linkEvents: LinkEvent[];
  /** The usage page's series (counted calls reach it at the next flush, USAGE_FLUSH_MS). */
  usage?: UsageSeries | undefined;
  now: number;
}

export interface DashboardProps {
  viewer: Viewer;
  page: DashboardPageName;
  data: DashboardData;
  notice?: string | undefined;
  error?: string | undefined;
  /** A secret shown this once: the api_token or the webhook secret. */
  revealed?: { what: string; value: string; note: string } | undefined;
  ping?: PingResult | undefined;
  originsText?: string | undefined;
  webhookText?: string | undefined;
}

function SecretOnce({ what, value, note }: { what: string; value: string; note: string }) {
  return (
    <div class="alert success" role="status">
      <h2>Your new {what}</h2>
      <p>
        Copy it now: it is shown this once and never again. <strong>{note}</strong>
      </p>
      <pre>
        <code data-secret={what}>{value}</code>
      </pre>
    </div>
  );
}

function KeysPage({ p }: { p: DashboardProps }) {
  const { partner, now } = p.data;
  const graceUntil = partner.previous_token_expires_at !== null && partner.previous_token_expires_at > now ? partner.previous_token_expires_at : null;
  return (
    <>
      <section class="card" aria-labelledby="keys-title">
        <h2 id="keys-title">Keys</h2>
        <dl class="facts">
          <dt>api_key (public, goes in URLs)</dt>
          <dd>
            <code data-api-key>{partner.api_key}</code>
          </dd>
          <dt>api_token (secret, only in POST bodies)</dt>
          <dd>
            {partner.token_unissued
              ? 'Not issued yet: issue it below, and store it on your server.'
              : 'Issued; it is never shown again. Rotate it to get a new one.'}
          </dd>
          {graceUntil !== null ? (
            <>
              <dt>Previous api_token</dt>
              <dd>
                still accepted until <When ms={graceUntil} />
              </dd>
            </>
          ) : null}
        </dl>
        <form method="post" action={`/partners/${partner.id}/token`} class="inline-form">
          <CsrfField token={p.viewer.csrf} />
          <input type="hidden" name="replaces" value={tokenStamp(partner.token_hash)} />
          <button type="submit" class="button">
            {partner.token_unissued ? 'Issue the api_token' : 'Rotate the api_token'}
          </button>
        </form>
        {partner.token_unissued ? null : (
          <p class="hint">After a rotation the old api_token keeps working for a grace period, so you can deploy the new one.</p>
        )}
      </section>
      <section class="card" aria-labelledby="origins-title">
        <h2 id="origins-title">Widget origins</h2>
        <form method="post" action={`/partners/${partner.id}/origins`}>
          <CsrfField token={p.viewer.csrf} />
          <div class="field">
            <label for="origins">Origins allowed to embed the widget and call from browsers</label>
            <p class="hint" id="origins-hint">
              One per line, such as https://example.com. Empty: any origin.
            </p>
            <textarea id="origins" name="origins" rows={4} maxLength={4000} aria-describedby="origins-hint">
              {p.originsText ?? allowedOrigins(partner).join('\n')}
            </textarea>
          </div>
          <button type="submit" class="button secondary">
            Save origins
          </button>
        </form>
      </section>
    </>
  );
}

function deliveryState(row: OutboxRow): string {
  if (row.status === 'delivered') return 'delivered';
  if (row.status === 'dead') return 'failed';
  if (row.status === 'pending') return row.attempts > 0 ? 'failed, will retry' : 'waiting';
  return row.status;
}

function WebhookPage({ p }: { p: DashboardProps }) {
  const { partner, deliveries } = p.data;
  return (
    <>
      <section class="card" aria-labelledby="endpoint-title">
        <h2 id="endpoint-title">Endpoint</h2>
        {partner.webhook_disabled ? (
          <Notice kind="error">Deliveries are stopped: the endpoint answered 410 Gone. Save the address again to resume.</Notice>
        ) : null}
        <form method="post" action={`/partners/${partner.id}/webhook`}>
          <CsrfField token={p.viewer.csrf} />
          <TextField
            name="webhook_url"
            label="Webhook URL"
            type="url"
            value={p.webhookText ?? partner.webhook_url ?? ''}
            maxLength={2000}
            hint="Signed change events (Standard Webhooks) are POSTed here. Empty: no webhooks."
          />
          <button type="submit" class="button secondary">
            Save endpoint
          </button>
        </form>
        {partner.webhook_url ? (
          <div class="actions">
            <form method="post" action={`/partners/${partner.id}/webhook/ping`} class="inline-form">
              <CsrfField token={p.viewer.csrf} />
              <button type="submit" class="button secondary">
                Send a test ping
              </button>
            </form>
            <form method="post" action={`/partners/${partner.id}/webhook/secret`} class="inline-form">
              <CsrfField token={p.viewer.csrf} />
              <button type="submit" class="button ghost">
                Rotate the secret
              </button>
            </form>
          </div>
        ) : null}
        {p.ping ? (
          <div class={p.ping.ok ? 'alert success' : 'alert error'} role="status" data-ping={p.ping.ok ? 'ok' : 'failed'}>
            <p>
              Ping {p.ping.eventId}: {p.ping.status === null ? 'no answer' : `HTTP ${p.ping.status}`}
              {p.ping.ok ? ' (accepted)' : ' (not accepted: only a 2xx answer counts)'}
            </p>
            {p.ping.excerpt ? (
              <p>
                Answer: <code>{p.ping.excerpt}</code>
              </p>
            ) : null}
          </div>
        ) : null}
      </section>
      <section class="card" aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Recent deliveries</h2>
        {deliveries.length === 0 ? (
          <p class="empty">No events yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="stack" id="deliveries">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Answer</th>
                  <th scope="col">Next retry</th>
                  <th scope="col">
                    <span class="visually-hidden">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {deliveries.map((d) => {
                  const state = deliveryState(d);
                  const failed = d.status === 'dead' || (d.status === 'pending' && d.attempts > 0);
                  return (
                    <tr key={d.id} data-event={d.event_id} data-state={state}>
                      <td data-label="Event">
                        {d.event_type}
                        <br />
                        <When ms={d.created_at} />
                      </td>
                      <td data-label="Status">{state}</td>
                      <td data-label="Attempts">{d.attempts}</td>
                      <td data-label="Answer" class="detail">
                        {d.last_status !== null ? `HTTP ${d.last_status}` : (d.last_error ?? '—')}
                      </td>
                      <td data-label="Next retry">{d.status === 'pending' && d.attempts > 0 ? <When ms={d.next_attempt_at} /> : '—'}</td>
                      <td data-label="Action">
                        {failed ? (
                          <form method="post" action={`/partners/${d.partner_id}/webhook/retry`} class="inline-form">
                            <CsrfField token={p.viewer.csrf} />
                            <input type="hidden" name="event" value={String(d.id)} />
                            <button type="submit" class="button small secondary">
                              Retry now<span class="visually-hidden"> {d.event_id}</span>
                            </button>
                          </form>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

function MembersPage({ p }: { p: DashboardProps }) {
  const { partner, members } = p.data;
  return (
    <>
      <section class="card" aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        <ul class="link-list">
          {members.map((m) => (
            <li key={m.userRef} class="link-item" data-member={m.userId}>
              <span>
                {m.userId}
                {m.userId === p.viewer.userId ? ' (you)' : ''}
              </span>
              {members.length > 1 ? (
                <form method="post" action={`/partners/${partner.id}/members/remove`} class="inline-form">
                  <CsrfField token={p.viewer.csrf} />
                  <input type="hidden" name="member" value={m.userId} />
                  <button type="submit" class="button small danger-ghost">
                    Remove<span class="visually-hidden"> {m.userId}</span>
                  </button>
                </form>
              ) : null}
            </li>
          ))}
        </ul>
      </section>
      <section class="card" aria-labelledby="invite-title">
        <h2 id="invite-title">Invite someone</h2>
        <form method="post" action={`/partners/${partner.id}/members/invite`}>
          <CsrfField token={p.viewer.csrf} />
          <TextField
            name="email"
            label="Their e-mail address"
            type="email"
            autocomplete="off"
            maxLength={254}
            required
            hint="We mail them a link that works for 7 days; they accept it logged in with that address."
          />
          <button type="submit" class="button secondary">
            Send the invitation
          </button>
        </form>
      </section>
    </>
  );
}

const EVENT_TEXT: Record<string, string> = {
  'linked/partner': 'linked (sync_user)',
  'unlinked/partner': 'unlinked (unsync_user)',
  'unlinked/user': 'ended by the person',
  'unlinked/deletion': 'ended: account deleted',
};

function LinksPage({ p }: { p: DashboardProps }) {
  const { linkedPeople, linkEvents } = p.data;
  return (
    <section class="card" aria-labelledby="linked-title">
      <h2 id="linked-title">Linked users</h2>
      <p class="big-number">
        <strong data-linked-count>{linkedPeople}</strong> {linkedPeople === 1 ? 'person is' : 'people are'} linked now.
      </p>
      <h3>Links made and ended in the last 30 days</h3>
      {linkEvents.length === 0 ? (
        <p class="empty">None.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">What</th>
              </tr>
            </thead>
            <tbody>
              {linkEvents.map((e, i) => (
                <tr key={i}>
                  <td data-label="When">
                    <When ms={e.at} />
                  </td>
                  <td data-label="What">{EVENT_TEXT[`${e.kind}/${e.by}`] ?? e.kind}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** The place the usage charts go; until requests are counted it says so rather than show numbers. */
function UsagePage(p: { usage: UsageSeries | undefined }) {
  return (
    <section class="card" aria-labelledby="usage-title" id="usage">
      <h2 id="usage-title">Usage</h2>
      <p>Calls to the partner API with this partner's api_key, counted per hour (UTC); the last minute's calls may not be shown yet.</p>
      {p.usage ? <UsageCharts usage={p.usage} /> : null}
    </section>
  );
}

export function PartnerDashboard(p: DashboardProps) {
  const meta = DASHBOARD_PAGES.find((x) => x.page === p.page) ?? DASHBOARD_PAGES[0];
  const { partner } = p.data;
  return (
    <Layout title={`${meta.title} · ${partner.name}`} viewer={p.viewer}>
      <div class="page-head">
        <p class="account-hello">
          <a href="/partners">Your partners</a> › <span>{partner.name}</span>
          {partner.suspended ? <span class="badge warn">suspended</span> : null}
        </p>
        <nav aria-label="Partner" class="account-nav">
          <ul>
            {DASHBOARD_PAGES.map((x) => (
              <li key={x.page}>
                <a href={`/partners/${partner.id}${x.suffix}`} aria-current={x.page === p.page ? 'page' : undefined}>
                  {x.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <h1>{meta.title}</h1>
      </div>
      {p.notice ? <Notice kind="success">{p.notice}</Notice> : null}
      {p.error ? <Notice kind="error">{p.error}</Notice> : null}
      {p.revealed ? <SecretOnce {...p.revealed} /> : null}
      <div class="account-body single">
        {p.page === 'keys' ? <KeysPage p={p} /> : null}
        {p.page === 'webhook' ? <WebhookPage p={p} /> : null}
        {p.page === 'members' ? <MembersPage p={p} /> : null}
        {p.page === 'links' ? <LinksPage p={p} /> : null}
        {p.page === 'usage' ? <UsagePage usage={p.data.usage} /> : null}
      </div>
    </Layout>
  );
}
