// The operator console: applications, partners, people, catalogue, queues and the audit log. It
// shows no password, token or secret: a partner's api_key (public) and whether a webhook is set.
import type { ComponentChildren } from 'preact';
import type { CatalogueEntry } from '../../catalogue/catalogue-file.js';
import { isProvenAccount } from '../../domain/visibility.js';
import type { MailRow } from '../../repositories/mail-queue.js';
import type { OutboxRow } from '../../repositories/outbox.js';
import type { AuditEntry } from '../../repositories/operator-audit.js';
import type { Application } from '../../repositories/partner-applications.js';
import type { Member } from '../../repositories/partner-members.js';
import { allowedOrigins, type Partner } from '../../repositories/partners.js';
import type { User } from '../../repositories/users.js';
import type { AccountData } from '../account-data.js';
import { CsrfField, TextField } from './fields.js';
import { Day, Layout, Notice, When, type Viewer } from './Layout.js';

export const CONSOLE_PAGES = [
  { page: 'applications', path: '/console', label: 'Applications' },
  { page: 'partners', path: '/console/partners', label: 'Partners' },
  { page: 'people', path: '/console/people', label: 'People' },
  { page: 'catalogue', path: '/console/catalogue', label: 'Catalogue' },
  { page: 'queues', path: '/console/queues', label: 'Queues' },
  { page: 'audit', path: '/console/audit', label: 'Audit log' },
] as const;

export type ConsolePageName = (typeof CONSOLE_PAGES)[number]['page'];

export interface ConsoleFrameProps {
  viewer: Viewer;
  page: ConsolePageName;
  title: string;
  notice?: string | undefined;
  error?: string | undefined;
  children: ComponentChildren;
}

export function ConsoleFrame(p: ConsoleFrameProps) {
  return (
    <Layout title={`${p.title} · Console`} viewer={p.viewer}>
      <div class="page-head">
        <p class="account-hello">Operator console</p>
        <nav aria-label="Console" class="account-nav">
          <ul>
            {CONSOLE_PAGES.map((x) => (
              <li key={x.page}>
                <a href={x.path} aria-current={x.page === p.page ? 'page' : undefined}>
                  {x.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <h1>{p.title}</h1>
      </div>
      {p.notice ? <Notice kind="success">{p.notice}</Notice> : null}
      {p.error ? <Notice kind="error">{p.error}</Notice> : null}
      <div class="account-body single">{p.children}</div>
    </Layout>
  );
}

function Hidden({ name, value }: { name: string; value: string }) {
  return <input type="hidden" name={name} value={value} />;
}

/** One button that posts one action, with the CSRF token. */
export function ActionButton(p: { csrf: string; action: string; fields: Record<string, string>; label: string; hidden?: string; kind?: string }) {
  return (
    <form method="post" action={p.action} class="inline-form">
      <CsrfField token={p.csrf} />
      {Object.entries(p.fields).map(([k, v]) => (
        <Hidden key={k} name={k} value={v} />
      ))}
      <button type="submit" class={`button small ${p.kind ?? 'secondary'}`}>
        {p.label}
        {p.hidden ? <span class="visually-hidden"> {p.hidden}</span> : null}
      </button>
    </form>
  );
}

function SearchForm({ action, label, value }: { action: string; label: string; value: string }) {
  return (
    <form method="get" action={action} class="card">
      <div class="field">
        <label for="q">{label}</label>
        <div class="input-row">
          <input id="q" name="q" type="search" value={value} maxLength={254} />
          <button type="submit" class="button secondary">
            Search
          </button>
        </div>
      </div>
    </form>
  );
}

export function ApplicationsPage(p: { viewer: Viewer; pending: Application[]; decided: Application[]; autoApprove: boolean; notice?: string | undefined }) {
  const rows = (list: Application[]) => (
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
          {list.map((a) => (
            <tr key={a.id} data-application={a.id}>
              <td data-label="Name">
                <a href={`/console/applications/${a.id}`}>{a.name}</a>
              </td>
              <td data-label="Sent">
                <Day ms={a.createdAt} />
              </td>
              <td data-label="Status">{a.status}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
  return (
    <ConsoleFrame viewer={p.viewer} page="applications" title="Applications" notice={p.notice}>
      <section class="card" aria-labelledby="pending-title">
        <h2 id="pending-title">Waiting for review</h2>
        {p.pending.length === 0 ? <p class="empty">No application is waiting.</p> : rows(p.pending)}
      </section>
      <section class="card" aria-labelledby="auto-title">
        <h2 id="auto-title">Approval on application</h2>
        <p data-auto-approve={p.autoApprove ? 'on' : 'off'}>
          {p.autoApprove ? 'On: an application from a confirmed address is approved at once.' : 'Off: every application waits for an operator.'}
        </p>
        <ActionButton
          csrf={p.viewer.csrf}
          action="/console/settings"
          fields={{ auto_approve: p.autoApprove ? '0' : '1' }}
          label={p.autoApprove ? 'Review every application' : 'Approve on application'}
        />
      </section>
      <section class="card" aria-labelledby="decided-title">
        <h2 id="decided-title">Recently decided</h2>
        {p.decided.length === 0 ? <p class="empty">None yet.</p> : rows(p.decided)}
      </section>
    </ConsoleFrame>
  );
}

export function ApplicationPage(p: { viewer: Viewer; a: Application; applicant: string; error?: string | undefined }) {
  const a = p.a;
  return (
    <ConsoleFrame viewer={p.viewer} page="applications" title={`Application: ${a.name}`} error={p.error}>
      <section class="card" aria-labelledby="application-title">
        <h2 id="application-title">What they asked for</h2>
        <dl class="facts">
          <dt>Applicant</dt>
          <dd>
            <a href={`/console/people/${p.applicant}`}>{p.applicant}</a>
          </dd>
          <dt>Site</dt>
          <dd>{a.siteUrl}</dd>
          <dt>What it will do with identities</dt>
          <dd class="pre-line">{a.purpose}</dd>
          <dt>Widget origins</dt>
          <dd>{a.origins.length ? a.origins.join(', ') : '(none)'}</dd>
          <dt>Contact</dt>
          <dd>{a.contact}</dd>
          <dt>Sent</dt>
          <dd>
            <When ms={a.createdAt} />
          </dd>
          <dt>Status</dt>
          <dd data-status={a.status}>
            {a.status}
            {a.decidedBy ? ` by ${a.decidedBy}` : ''}
            {a.declineReason ? `: ${a.declineReason}` : ''}
            {a.partnerId !== null ? (
              <>
                {' '}
                (<a href={`/console/partners/${a.partnerId}`}>partner {a.partnerId}</a>)
              </>
            ) : null}
          </dd>
        </dl>
      </section>
      {a.status === 'pending' ? (
        <section class="card" aria-labelledby="decide-title">
          <h2 id="decide-title">Decide</h2>
          <form method="post" action={`/console/applications/${a.id}/approve`}>
            <CsrfField token={p.viewer.csrf} />
            <button type="submit" class="button">
              Approve
            </button>
          </form>
          <form method="post" action={`/console/applications/${a.id}/decline`}>
            <CsrfField token={p.viewer.csrf} />
            <TextField name="reason" label="Reason for declining (sent to the applicant)" maxLength={500} required />
            <button type="submit" class="button danger-ghost">
              Decline
            </button>
          </form>
        </section>
      ) : null}
    </ConsoleFrame>
  );
}

export function PartnersPage(p: { viewer: Viewer; q: string; partners: Partner[] }) {
  return (
    <ConsoleFrame viewer={p.viewer} page="partners" title="Partners">
      <SearchForm action="/console/partners" label="Name, id or api_key" value={p.q} />
      <section class="card" aria-labelledby="partner-list-title">
        <h2 id="partner-list-title">{p.q ? 'Found' : 'Newest'}</h2>
        {p.partners.length === 0 ? (
          <p class="empty">No partner found.</p>
        ) : (
          <ul class="link-list">
            {p.partners.map((x) => (
              <li key={x.id} class="link-item" data-partner={x.id}>
                <a href={`/console/partners/${x.id}`}>{x.name}</a> <span class="hint">#{x.id}</span>
                {x.suspended ? <span class="badge warn">suspended</span> : null}
                {x.trusted ? <span class="badge verified">trusted</span> : null}
              </li>
            ))}
          </ul>
        )}
      </section>
    </ConsoleFrame>
  );
}

export function PartnerPage(p: { viewer: Viewer; partner: Partner; members: Member[]; notice?: string | undefined; error?: string | undefined }) {
  const x = p.partner;
  const action = `/console/partners/${x.id}`;
  return (
    <ConsoleFrame viewer={p.viewer} page="partners" title={`Partner: ${x.name}`} notice={p.notice} error={p.error}>
      <section class="card" aria-labelledby="partner-facts-title">
        <h2 id="partner-facts-title">Settings</h2>
        <dl class="facts">
          <dt>api_key</dt>
          <dd>
            <code>{x.api_key}</code>
          </dd>
          <dt>State</dt>
          <dd data-suspended={x.suspended ? 'yes' : 'no'}>{x.suspended ? 'suspended' : 'active'}</dd>
          <dt>Trusted</dt>
          <dd data-trusted={x.trusted ? 'yes' : 'no'}>{x.trusted ? 'yes: sees usrSvcId of every entry' : 'no'}</dd>
          <dt>Budget</dt>
          <dd>{x.rate_limit_per_minute === null ? 'the installation default' : `${x.rate_limit_per_minute} requests a minute`}</dd>
          <dt>Origins</dt>
          <dd>{allowedOrigins(x).join(', ') || '(any)'}</dd>
          <dt>Webhook</dt>
          <dd>{x.webhook_url ? (x.webhook_disabled ? 'set, stopped after 410 Gone' : 'set') : 'none'}</dd>
        </dl>
        <div class="actions">
          <ActionButton
            csrf={p.viewer.csrf}
            action={action}
            fields={{ action: x.suspended ? 'resume' : 'suspend' }}
            label={x.suspended ? 'Resume' : 'Suspend'}
            kind={x.suspended ? 'secondary' : 'danger-ghost'}
          />
          <ActionButton
            csrf={p.viewer.csrf}
            action={action}
            fields={{ action: x.trusted ? 'untrust' : 'trust' }}
            label={x.trusted ? 'Stop trusting' : 'Trust'}
          />
        </div>
        <form method="post" action={action}>
          <CsrfField token={p.viewer.csrf} />
          <Hidden name="action" value="budget" />
          <TextField
            name="rate_limit"
            label="Requests a minute for this api_key"
            value={x.rate_limit_per_minute === null ? '' : String(x.rate_limit_per_minute)}
            inputMode="numeric"
            maxLength={9}
            hint="Empty: the installation default."
          />
          <button type="submit" class="button secondary">
            Save budget
          </button>
        </form>
      </section>
      <section class="card" aria-labelledby="partner-members-title">
        <h2 id="partner-members-title">Members</h2>
        {p.members.length === 0 ? (
          <p class="empty">No members: the partner is run with the CLI.</p>
        ) : (
          <ul class="link-list">
            {p.members.map((m) => (
              <li key={m.userRef} class="link-item" data-member={m.userId}>
                <a href={`/console/people/${m.userId}`}>{m.userId}</a>
                <ActionButton
                  csrf={p.viewer.csrf}
                  action={`${action}/members`}
                  fields={{ action: 'remove', user_id: m.userId }}
                  label="Remove"
                  hidden={m.userId}
                  kind="danger-ghost"
                />
              </li>
            ))}
          </ul>
        )}
        <form method="post" action={`${action}/members`}>
          <CsrfField token={p.viewer.csrf} />
          <Hidden name="action" value="add" />
          <TextField name="user_id" label="Add a member by userId" maxLength={30} />
          <button type="submit" class="button secondary">
            Add member
          </button>
        </form>
      </section>
    </ConsoleFrame>
  );
}

export function PeoplePage(p: { viewer: Viewer; q: string; found: User[] }) {
  return (
    <ConsoleFrame viewer={p.viewer} page="people" title="People">
      <SearchForm action="/console/people" label="userId or e-mail address (exact)" value={p.q} />
      {p.q ? (
        <section class="card" aria-labelledby="people-found-title">
          <h2 id="people-found-title">Found</h2>
          {p.found.length === 0 ? (
            <p class="empty">No account by that userId or address.</p>
          ) : (
            <ul class="link-list">
              {p.found.map((u) => (
                <li key={u.id} class="link-item">
                  <a href={`/console/people/${u.user_id}`}>{u.user_id}</a>
                </li>
              ))}
            </ul>
          )}
        </section>
      ) : null}
    </ConsoleFrame>
  );
}

export function PersonPage(p: { viewer: Viewer; data: AccountData; notice?: string | undefined; error?: string | undefined }) {
  const u = p.data.user;
  const action = `/console/people/${u.user_id}`;
  return (
    <ConsoleFrame viewer={p.viewer} page="people" title={`Person: ${u.user_id}`} notice={p.notice} error={p.error}>
      <section class="card" aria-labelledby="person-title">
        <h2 id="person-title">Account</h2>
        <dl class="facts">
          <dt>E-mail address</dt>
          <dd>
            {u.email} {isProvenAccount(u) ? '(confirmed)' : '(not confirmed)'}
          </dd>
          <dt>Visible to partners</dt>
          <dd>{u.opted_in ? 'yes' : u.consented ? 'opted in, address not confirmed' : 'no: opted out'}</dd>
          <dt>Discoverable</dt>
          <dd>{u.discoverable ? 'yes' : 'no'}</dd>
          <dt>Pro</dt>
          <dd data-pro={u.pro ? 'yes' : 'no'}>{u.pro ? 'yes' : 'no'}</dd>
          <dt>Role</dt>
          <dd>{u.role}</dd>
          <dt>Since</dt>
          <dd>
            <Day ms={u.created_at} />
          </dd>
        </dl>
        <ActionButton csrf={p.viewer.csrf} action={action} fields={{ action: u.pro ? 'pro_off' : 'pro_on' }} label={u.pro ? 'End pro' : 'Make pro'} />
      </section>
      <section class="card" aria-labelledby="person-identities-title">
        <h2 id="person-identities-title">Identities, as they see them</h2>
        {p.data.identities.length === 0 ? (
          <p class="empty">None.</p>
        ) : (
          <div class="table-wrap">
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Service</th>
                  <th scope="col">Identifier</th>
                  <th scope="col">Verified</th>
                  <th scope="col">
                    <span class="visually-hidden">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {p.data.identities.map((i) => (
                  <tr key={i.svcId} data-identity={i.svcId}>
                    <td data-label="Service">{i.svcName}</td>
                    <td data-label="Identifier">{i.usrSvcId}</td>
                    <td data-label="Verified">{i.verified ? `yes (${i.verifiedBy ?? 'unknown'})` : 'no'}</td>
                    <td data-label="Action">
                      {i.verified && i.verifiedBy !== 'operator' ? null : (
                        <ActionButton
                          csrf={p.viewer.csrf}
                          action={action}
                          fields={{ action: i.verified ? 'unmark' : 'mark', svc_id: i.svcId }}
                          label={i.verified ? 'Remove the mark' : 'Mark verified'}
                          hidden={i.svcName}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section class="card" aria-labelledby="person-links-title">
        <h2 id="person-links-title">Connected sites</h2>
        {p.data.links.length === 0 ? (
          <p class="empty">None.</p>
        ) : (
          <ul class="link-list">
            {p.data.links.map((l) => (
              <li key={l.partnerId} class="link-item">
                <a href={`/console/partners/${l.partnerId}`}>{l.partnerName}</a> <span class="hint">since</span> <Day ms={l.linkedAt} />
              </li>
            ))}
          </ul>
        )}
      </section>
    </ConsoleFrame>
  );
}

export function CataloguePage(p: { viewer: Viewer; q: string; services: CatalogueEntry[]; notice?: string | undefined; error?: string | undefined }) {
  return (
    <ConsoleFrame viewer={p.viewer} page="catalogue" title="Catalogue" notice={p.notice} error={p.error}>
      <SearchForm action="/console/catalogue" label="Service id or name" value={p.q} />
      {p.services.map((s) => (
        <section class="card" key={s.svcId} aria-labelledby={`svc-${s.svcId}`} data-service={s.svcId}>
          <h2 id={`svc-${s.svcId}`}>
            {s.svcName} <span class="hint">({s.svcId})</span> {s.disabled ? <span class="badge warn">disabled</span> : null}
          </h2>
          <form method="post" action={`/console/catalogue/${s.svcId}`}>
            <CsrfField token={p.viewer.csrf} />
            <Hidden name="action" value="edit" />
            <TextField id={`name-${s.svcId}`} name="svc_name" label="Name" value={s.svcName} maxLength={200} />
            <TextField id={`url-${s.svcId}`} name="svc_url" label="Main address" value={s.svcURL} maxLength={2000} />
            <TextField id={`left-${s.svcId}`} name="svc_left_url" label="Profile URL before the identifier" value={s.svcLeftURL} maxLength={2000} />
            <TextField id={`right-${s.svcId}`} name="svc_right_url" label="Profile URL after the identifier" value={s.svcRightURL} maxLength={2000} />
            <button type="submit" class="button secondary">
              Save<span class="visually-hidden"> {s.svcName}</span>
            </button>
          </form>
          <ActionButton
            csrf={p.viewer.csrf}
            action={`/console/catalogue/${s.svcId}`}
            fields={{ action: s.disabled ? 'enable' : 'disable' }}
            label={s.disabled ? 'Enable' : 'Disable'}
            hidden={s.svcName}
            kind={s.disabled ? 'secondary' : 'danger-ghost'}
          />
        </section>
      ))}
      {p.services.length === 0 && p.q ? <p class="empty">No service found.</p> : null}
    </ConsoleFrame>
  );
}

export function QueuesPage(p: { viewer: Viewer; mail: MailRow[]; events: OutboxRow[]; notice?: string | undefined; error?: string | undefined }) {
  return (
    <ConsoleFrame viewer={p.viewer} page="queues" title="Queues" notice={p.notice} error={p.error}>
      <section class="card" aria-labelledby="mail-title">
        <h2 id="mail-title">Mail that failed</h2>
        {p.mail.length === 0 ? (
          <p class="empty">None.</p>
        ) : (
          <ul class="link-list">
            {p.mail.map((m) => (
              <li key={m.id} class="link-item" data-mail={m.id}>
                <span>
                  #{m.id} {m.kind}, <When ms={m.created_at} />, {m.attempts} attempts: {m.last_error ?? ''}
                </span>
                <ActionButton
                  csrf={p.viewer.csrf}
                  action="/console/queues/retry"
                  fields={{ kind: 'mail', id: String(m.id) }}
                  label="Retry"
                  hidden={`mail ${m.id}`}
                />
              </li>
            ))}
          </ul>
        )}
      </section>
      <section class="card" aria-labelledby="events-title">
        <h2 id="events-title">Webhook deliveries that failed</h2>
        {p.events.length === 0 ? (
          <p class="empty">None.</p>
        ) : (
          <ul class="link-list">
            {p.events.map((e) => (
              <li key={e.id} class="link-item" data-event={e.event_id}>
                <span>
                  #{e.id} {e.event_type} to <a href={`/console/partners/${e.partner_id}`}>partner {e.partner_id}</a>, {e.attempts} attempts,{' '}
                  {e.status === 'dead' ? 'given up' : 'will retry'}: {e.last_error ?? ''}
                </span>
                <ActionButton
                  csrf={p.viewer.csrf}
                  action="/console/queues/retry"
                  fields={{ kind: 'webhook', id: String(e.id) }}
                  label="Retry"
                  hidden={`event ${e.id}`}
                />
              </li>
            ))}
          </ul>
        )}
      </section>
    </ConsoleFrame>
  );
}

export function AuditPage(p: { viewer: Viewer; entries: AuditEntry[]; nextBefore: number | null }) {
  return (
    <ConsoleFrame viewer={p.viewer} page="audit" title="Audit log">
      <p class="actions">
        <a class="button secondary" href="/console/audit/export?format=csv">
          Export CSV
        </a>
        <a class="button secondary" href="/console/audit/export?format=json">
          Export JSON
        </a>
      </p>
      {p.entries.length === 0 ? (
        <p class="empty">No operator action yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack" id="audit">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                <th scope="col">On</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
              </tr>
            </thead>
            <tbody>
              {p.entries.map((e) => (
                <tr key={e.id} data-action={e.action}>
                  <td data-label="When">
                    <When ms={e.at} />
                  </td>
                  <td data-label="Who">{e.actorUserId}</td>
                  <td data-label="What">{e.action}</td>
                  <td data-label="On">{e.target}</td>
                  <td data-label="Before" class="detail">
                    <code>{JSON.stringify(e.before)}</code>
                  </td>
                  <td data-label="After" class="detail">
                    <code>{JSON.stringify(e.after)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {p.nextBefore !== null ? (
        <p>
          <a href={`/console/audit?before=${p.nextBefore}`}>Older entries</a>
        </p>
      ) : null}
    </ConsoleFrame>
  );
}
