// The person's side of proofs: their proof text with a copy button, and for each identity that a
// proof can prove, what to do on that service; where the proof is somewhere the person chooses (a
// gist), a field for its address.
import type { AccountData } from '../account-data.js';
import { type ProofForms, proofFormsOfPage } from '../../verification/proof-text.js';
import { CsrfField, TextField } from './fields.js';
import { AccountNav } from './AccountNav.js';
import { Layout, Notice } from './Layout.js';

export interface ProofMethodView {
  name: string;
  steps: string;
  /** Set when this method reads a proof at an address the person gives. */
  proofUrl?: { example: string; current: string | null };
}

export interface ProofIdentityView {
  svcId: string;
  svcName: string;
  usrSvcId: string;
  verified: boolean;
  methods: ProofMethodView[];
}

export interface ProofsPageProps {
  userId: string;
  csrf: string;
  forms: ProofForms;
  identities: ProofIdentityView[];
  notice?: string | undefined;
  /** A refused proof address: which service, why, and what was typed. */
  error?: { svcId: string; message: string; value: string } | undefined;
}

export function ProofsPage(p: ProofsPageProps) {
  return (
    <Layout title="Prove your identities" viewer={{ userId: p.userId, csrf: p.csrf }}>
      <div class="page-head">
        <AccountNav current="identities" />
        <h1>Prove your identities</h1>
      </div>
      {p.notice ? <Notice kind="success">{p.notice}</Notice> : null}
      <section class="card" aria-labelledby="proof-text-title" id="proof-text">
        <h2 id="proof-text-title">Your proof text</h2>
        <p>Put either of these where a service below says. Each names this account and no other; anyone can read it, so it tells nothing secret.</p>
        <pre>
          <code data-copy data-proof-text="url">
            {p.forms.profileUrl}
          </code>
        </pre>
        <p>Where space is tight (a short bio), the short form:</p>
        <pre>
          <code data-copy data-proof-text="short">
            {p.forms.short}
          </code>
        </pre>
        <p>Once it is there, press “Verify now” beside the identity on your account page. We read it again once a day; if it goes, so does the mark.</p>
      </section>
      <section class="card" aria-labelledby="proof-services-title" id="proof-services">
        <h2 id="proof-services-title">Your identities a proof can prove</h2>
        {p.identities.length === 0 ? (
          <p>None of your identities is on a service we can read a proof from. Add one on your account page, or use a rel="me" link.</p>
        ) : (
          p.identities.map((identity) => (
            <IdentityProof key={identity.svcId} identity={identity} csrf={p.csrf} error={p.error?.svcId === identity.svcId ? p.error : undefined} />
          ))
        )}
      </section>
    </Layout>
  );
}

/** The account page's short version: the proof text, and where the steps for each service are. */
export function ProofTextSection({ data }: { data: AccountData }) {
  const forms = proofFormsOfPage(data.profileUrl, data.user.user_id);
  return (
    <section class="card" aria-labelledby="proof-summary-title" id="proof">
      <h2 id="proof-summary-title">Your proof text</h2>
      <p>
        Put it in your bio on GitHub, GitLab, Mastodon, Bluesky, Hacker News, Reddit and other services, then press “Verify now”.{' '}
        <a href="/account/proofs">What to do on each of your services</a>.
      </p>
      <pre>
        <code data-copy>{forms.profileUrl}</code>
      </pre>
      <p>Where space is tight:</p>
      <pre>
        <code data-copy>{forms.short}</code>
      </pre>
    </section>
  );
}

function IdentityProof({ identity, csrf, error }: { identity: ProofIdentityView; csrf: string; error: { message: string; value: string } | undefined }) {
  const withUrl = identity.methods.find((m) => m.proofUrl !== undefined);
  return (
    <div class="proof-service" id={`proof-${identity.svcId}`}>
      <h3>
        {identity.svcName}: <span class="usr-svc-id">{identity.usrSvcId}</span> {identity.verified ? <span class="badge">verified</span> : null}
      </h3>
      <ul>
        {identity.methods.map((m) => (
          <li key={m.name}>
            <strong>{m.name}:</strong> {m.steps}
          </li>
        ))}
      </ul>
      {withUrl?.proofUrl ? (
        <form method="post" action={`/account/proofs/${identity.svcId}`}>
          <CsrfField token={csrf} />
          <TextField
            name="proof_url"
            id={`proof-url-${identity.svcId}`}
            label={`Address of your proof on ${identity.svcName}`}
            type="url"
            value={error ? error.value : withUrl.proofUrl.current}
            hint={`For example ${withUrl.proofUrl.example}. Leave empty to remove it.`}
            error={error?.message}
            maxLength={2048}
          />
          <button type="submit" class="button">
            Save the address
          </button>
        </form>
      ) : null}
    </div>
  );
}
