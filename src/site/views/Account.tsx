import type { AccountData } from '../account-data.js';
import { IdentitiesSection, AttemptsSection, type IdentityFormState } from './AccountIdentities.js';
import {
  ConfirmAddressSection,
  DataSection,
  EmailSection,
  type EmailFormState,
  LinksSection,
  PasswordSection,
  ProfileSection,
  VisibilitySection,
} from './AccountSections.js';
import { DiscoverySection, type DiscoverySectionProps } from './AccountDiscovery.js';
import { Layout, Notice } from './Layout.js';
import { ProofTextSection } from './Proofs.js';
import { PasskeysSummary } from './Passkeys.js';
import { ACCOUNT_PAGES, AccountNav, type AccountPageName } from './AccountNav.js';
import { ConnectionsSection, type ConnectionItem, type ProviderButton } from './Providers.js';

export interface AccountPageProps {
  page: AccountPageName;
  data: AccountData;
  csrf: string;
  notice?: string | undefined;
  checked?: string | undefined;
  identityForm?: IdentityFormState;
  profileError?: string | undefined;
  deleteError?: string | undefined;
  /** An unproven account: when it is removed unless confirmed. */
  unprovenUntil?: number | undefined;
  passwordError?: string | undefined;
  emailForm?: EmailFormState;
  /** A notice that reports a refusal rather than a success. */
  warning?: string | undefined;
  discovery?: Omit<DiscoverySectionProps, 'csrf'>;
  /** The account's passkeys, for the security page's summary. */
  passkeyCount?: number;
  /** The security page's sign-in providers: connected, and those that could be. */
  connections?: { connections: ConnectionItem[]; available: ProviderButton[] };
}

function PageBody(p: AccountPageProps) {
  const { data, csrf } = p;
  switch (p.page) {
    case 'identities':
      return (
        <>
          <p class="page-links">
            <a href="#identities">Your identities</a> · <a href="#discover">Find my identities</a> · <a href="#checks">Recent checks</a> ·{' '}
            <a href="/account/proofs">Prove them</a>
          </p>
          <IdentitiesSection data={data} csrf={csrf} form={p.identityForm ?? {}} checked={p.checked} />
          {p.discovery ? <DiscoverySection csrf={csrf} {...p.discovery} /> : null}
          <AttemptsSection data={data} />
          <ProofTextSection data={data} />
        </>
      );
    case 'sharing':
      return <VisibilitySection data={data} csrf={csrf} />;
    case 'profile':
      return (
        <>
          <section class="card photo-summary" aria-labelledby="photo-link-title">
            <h2 id="photo-link-title">Photo</h2>
            <p>
              Your picture for sites that show avatars: upload a photo, or keep the letter avatar. <a href="/account/photo">Your photo</a>
            </p>
          </section>
          <ProfileSection data={data} csrf={csrf} error={p.profileError} />
        </>
      );
    case 'sites':
      return <LinksSection data={data} csrf={csrf} />;
    case 'security':
      return (
        <>
          <EmailSection data={data} csrf={csrf} form={p.emailForm ?? {}} />
          <PasswordSection csrf={csrf} error={p.passwordError} />
          <PasskeysSummary count={p.passkeyCount ?? 0} />
          {p.connections ? <ConnectionsSection csrf={csrf} {...p.connections} /> : null}
        </>
      );
    case 'data':
      return <DataSection data={data} csrf={csrf} deleteError={p.deleteError} />;
  }
}

export function AccountPage(p: AccountPageProps) {
  const { data, csrf } = p;
  const meta = ACCOUNT_PAGES.find((x) => x.page === p.page) ?? ACCOUNT_PAGES[0];
  return (
    <Layout title={meta.title} viewer={{ userId: data.user.user_id, csrf }}>
      <div class="page-head">
        <p class="account-hello">
          Hello, <span class="user-id">{data.user.user_id}</span>
        </p>
        <AccountNav current={p.page} />
        <h1>{meta.title}</h1>
      </div>
      {p.notice ? <Notice kind="success">{p.notice}</Notice> : null}
      {p.warning ? <Notice kind="error">{p.warning}</Notice> : null}
      {p.unprovenUntil !== undefined ? <ConfirmAddressSection data={data} csrf={csrf} expiresAt={p.unprovenUntil} /> : null}
      {/* A page of one section has the section's name as its heading already. */}
      <div class={p.page === 'sharing' || p.page === 'sites' || p.page === 'data' ? 'account-body single' : 'account-body'}>
        <PageBody {...p} />
      </div>
    </Layout>
  );
}
