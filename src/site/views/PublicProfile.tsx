// The public profile page /u/{userId} (SPEC §12): an h-card of the public fields, and the
// identities as rel="me" links, in the page and in <head>, with their verified marks.
import { Fragment } from 'preact';
import type { ProfileField } from '../../domain/profile.js';
import { Layout, type Viewer } from './Layout.js';
import { PublicMark } from './VerificationEvidence.js';

export interface PublicIdentity {
  svcName: string;
  url: string;
  verified: boolean;
  verifiedBy: string | null;
  verifiedAt: number | null;
}

export interface PublicProfileProps {
  viewer: Viewer | null;
  userId: string;
  profileUrl: string;
  fields: Partial<Record<ProfileField, string>>;
  identities: PublicIdentity[];
  isOwner: boolean;
  /** The photo's address (a u-photo), when the user uploaded one; else the initial is shown. */
  photoUrl?: string | undefined;
}

export function displayName(p: { userId: string; fields: Partial<Record<ProfileField, string>> }): string {
  const full = [p.fields.firstName, p.fields.lastName].filter(Boolean).join(' ');
  return full || p.fields.nickname || p.userId;
}

export function PublicProfilePage(p: PublicProfileProps) {
  const f = p.fields;
  const name = displayName(p);
  const hasParts = Boolean(f.firstName || f.lastName);
  const place = [
    f.street ? <span class="p-street-address">{f.street}</span> : null,
    f.city ? <span class="p-locality">{f.city}</span> : null,
    f.region ? <span class="p-region">{f.region}</span> : null,
    f.country ? <span class="p-country-name">{f.country}</span> : null,
  ].filter((x) => x !== null);
  const linked = p.identities.filter((i) => i.url);
  return (
    <Layout
      title={name}
      viewer={p.viewer}
      description={`${name}'s identities on the web`}
      head={
        <>
          <link rel="canonical" href={p.profileUrl} />
          {linked.map((i) => (
            <link rel="me" href={i.url} key={i.url} />
          ))}
        </>
      }
    >
      <article class="h-card profile card">
        <header class="profile-head">
          {p.photoUrl ? (
            <img class="avatar photo u-photo" src={p.photoUrl} alt="" width={80} height={80} />
          ) : (
            <span class="avatar" aria-hidden="true">
              {name.slice(0, 1).toUpperCase()}
            </span>
          )}
          <div>
            <h1 class="p-name">
              {hasParts ? (
                <>
                  {f.firstName ? <span class="p-given-name">{f.firstName}</span> : null}
                  {f.firstName && f.lastName ? ' ' : null}
                  {f.lastName ? <span class="p-family-name">{f.lastName}</span> : null}
                </>
              ) : (
                name
              )}
            </h1>
            {f.nickname && f.nickname !== name ? <p class="p-nickname nickname">{f.nickname}</p> : null}
            {place.length > 0 ? (
              <p class="place">
                {place.map((el, n) => (
                  <Fragment key={n}>
                    {n > 0 ? ', ' : null}
                    {el}
                  </Fragment>
                ))}
              </p>
            ) : null}
            <p class="profile-url">
              <a class="u-url u-uid" href={p.profileUrl}>
                {p.profileUrl}
              </a>
            </p>
          </div>
        </header>
        {f.bio ? <p class="p-note bio">{f.bio}</p> : null}
        <h2>Elsewhere on the web</h2>
        {p.identities.length === 0 ? (
          <p class="empty">{p.isOwner ? 'You have not added any identities yet.' : 'Nothing listed yet.'}</p>
        ) : (
          <ul class="public-identities">
            {p.identities.map((i) => (
              <li key={`${i.svcName}:${i.url}`}>
                <span class="service-mark" aria-hidden="true">
                  {i.svcName.slice(0, 1).toUpperCase()}
                </span>
                <span class="public-identity-text">
                  <span class="service-name">{i.svcName}</span>
                  {i.url ? (
                    <a class="u-url" rel="me" href={i.url}>
                      {i.url.replace(/^https?:\/\//, '')}
                    </a>
                  ) : null}
                </span>
                {i.verified ? (
                  <span class="verified-mark">
                    <span class="badge verified">
                      <span aria-hidden="true">✓ </span>Verified
                    </span>
                    <PublicMark verifiedBy={i.verifiedBy} verifiedAt={i.verifiedAt} />
                  </span>
                ) : (
                  <span class="badge muted">Unverified</span>
                )}
              </li>
            ))}
          </ul>
        )}
        <p class="hint profile-foot">
          “Verified” means this site proved the identity is this person's — a <code>rel="me"</code> link back here, a proof text on the service, a DNS record on
          their domain or their Bluesky handle — and checks it again every day; or that the operator vouched for it.
        </p>
        {p.isOwner ? (
          <p>
            <a class="button secondary small" href="/account">
              Edit in your account
            </a>
          </p>
        ) : null}
      </article>
    </Layout>
  );
}
