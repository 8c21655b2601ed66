// The evidence behind an identity's mark, shown in place next to it: on the account page how and
// when it was verified, what proves it, each method's last answer and why it failed; on the
// public profile how and since when.
import type { VerificationMethod } from '../../verification/methods.js';
import type { AttemptView, IdentityView } from '../account-data.js';
import { When } from './Layout.js';
import { METHOD_TEXT, OUTCOME_TEXT, PUBLIC_METHOD_TEXT } from './outcomes.js';

const methodText = (m: string) => METHOD_TEXT[m as VerificationMethod] ?? m;

/** A link where the evidence is a web page; a DNS name as text. */
function EvidenceRef({ url }: { url: string }) {
  if (/^https?:\/\//.test(url)) {
    return (
      <a href={url} rel="noopener noreferrer nofollow" class="evidence-url">
        {url}
      </a>
    );
  }
  return <code class="evidence-url">{url}</code>;
}

/** How an entry was verified, for its owner: method, since when, last checked, what proves it. */
export function MarkEvidenceLine({ i }: { i: IdentityView }) {
  if (!i.verified || i.verifiedBy === null || i.verifiedAt === null) return null;
  return (
    <p class="evidence" data-verified-by={i.verifiedBy}>
      Verified by {methodText(i.verifiedBy)} since <When ms={i.verifiedAt} />
      {i.lastCheckedAt !== null ? (
        <>
          , last checked <When ms={i.lastCheckedAt} />
        </>
      ) : null}
      {i.evidenceUrl ? (
        <>
          {' '}
          — evidence: <EvidenceRef url={i.evidenceUrl} />
        </>
      ) : null}
      .
    </p>
  );
}

/** A definite negative waiting for its confirmation: the person can fix it before the mark goes. */
export function PendingRemoval({ i, confirmAfterMs }: { i: IdentityView; confirmAfterMs: number }) {
  if (!i.verified || i.negativeSince === null) return null;
  return (
    <p class="hint warn" data-pending-removal="true">
      The last check did not find the proof. It is checked again after <When ms={i.negativeSince + confirmAfterMs} />; the mark is removed only if the proof is
      still missing then.
    </p>
  );
}

/** Each method's answer at the last check, and why a failed one failed. */
export function LastCheck({ attempts, justChecked }: { attempts: readonly AttemptView[]; justChecked: boolean }) {
  const first = attempts[0];
  if (!first) return <p class="check">Not checked yet.</p>;
  const won = attempts.find((a) => a.outcome === 'verified');
  const shown = won ? [won] : attempts;
  return (
    <div class="check-list" role={justChecked ? 'status' : undefined}>
      {shown.map((a, n) => (
        <p key={n} class={`check ${a.outcome === 'verified' ? 'ok' : 'bad'}`} data-check-result={a.outcome} data-method={a.method ?? ''}>
          <span class="check-label">
            {justChecked ? (
              'Checked just now'
            ) : (
              <>
                Last check <When ms={a.at} />
              </>
            )}
            :
          </span>{' '}
          <strong>{OUTCOME_TEXT[a.outcome]}</strong>
          {a.method ? <> ({methodText(a.method)})</> : null}
          {a.outcome !== 'verified' ? (
            <>
              {' '}
              — {a.detail}
              {a.status !== null ? <> (HTTP {a.status})</> : null}
            </>
          ) : null}
        </p>
      ))}
    </div>
  );
}

/** For the public profile: how and since when, nothing the person did not make public. */
export function PublicMark({ verifiedBy, verifiedAt }: { verifiedBy: string | null; verifiedAt: number | null }) {
  if (verifiedBy === null || verifiedAt === null) return null;
  return (
    <span class="evidence" data-verified-by={verifiedBy}>
      {' '}
      by {PUBLIC_METHOD_TEXT[verifiedBy as VerificationMethod] ?? verifiedBy}, since <When ms={verifiedAt} />
    </span>
  );
}

/** DNS and Bluesky, told to the person beside the rel="me" steps (docs/verification.md at length). */
export function OtherMethods({ profileUrl, shortProof }: { profileUrl: string; shortProof: string }) {
  return (
    <>
      <p>Other ways, each checked daily too:</p>
      <ul>
        <li>
          <strong>Your own domain</strong> (a website identity whose address is the domain): add a DNS TXT record at <code>_idsvc.</code>
          <em>your domain</em> (or at the domain itself) holding <code>{profileUrl}</code> or <code>{shortProof}</code>.
        </li>
        <li>
          <strong>Bluesky</strong>: put <code>{profileUrl}</code> in your profile description; we follow your handle to its DID document, which must name the
          handle back, and read your profile from your own server.
        </li>
      </ul>
      <p>A check that cannot reach a service never removes a mark; a missing proof removes it only when a second check an hour later still misses it.</p>
    </>
  );
}
