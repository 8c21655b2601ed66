import type { AccountData } from '../account-data.js';
import { IdentitiesSection, AttemptsSection, type IdentityFormState } from './AccountIdentities.js';
import { ConfirmAddressSection, DataSection, EmailSection, type EmailFormState, LinksSection, PasswordSection, ProfileSection, VisibilitySection } from './AccountSections.js';
import { DiscoverySection, type DiscoverySectionProps } from './AccountDiscovery.js';
import { Layout, Notice } from './Layout.js';
import { ProofTextSection } from './Proofs.js';

export interface AccountPageProps {
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
}

export function AccountPage(p: AccountPageProps) {
  const { data, csrf } = p;
  return (
    <Layout title="Your account" viewer={{ userId: data.user.user_id, csrf }}>
      <div class="page-head">
        <h1>
          Hello, <span class="user-id">{data.user.user_id}</span>
        </h1>
        <nav aria-label="Sections of this page" class="section-nav">
          <a href="#identities">Identities</a>
          <a href="/account/proofs">Prove them</a>
          <a href="#discover">Find my identities</a>
          <a href="#profile">Profile</a>
          <a href="/account/photo">Photo</a>
          <a href="#links">Connected sites</a>
          <a href="#data">Your data</a>
        </nav>
      </div>
      {p.notice ? <Notice kind="success">{p.notice}</Notice> : null}
      {p.warning ? <Notice kind="error">{p.warning}</Notice> : null}
      {p.unprovenUntil !== undefined ? <ConfirmAddressSection data={data} csrf={csrf} expiresAt={p.unprovenUntil} /> : null}
      <VisibilitySection data={data} csrf={csrf} />
      <IdentitiesSection data={data} csrf={csrf} form={p.identityForm ?? {}} checked={p.checked} />
      <ProofTextSection data={data} />
      {p.discovery ? <DiscoverySection csrf={csrf} {...p.discovery} /> : null}
      <AttemptsSection data={data} />
      <ProfileSection data={data} csrf={csrf} error={p.profileError} />
      <LinksSection data={data} csrf={csrf} />
      <EmailSection data={data} csrf={csrf} form={p.emailForm ?? {}} />
      <PasswordSection csrf={csrf} error={p.passwordError} />
      <DataSection data={data} csrf={csrf} deleteError={p.deleteError} />
    </Layout>
  );
}
