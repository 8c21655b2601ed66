// What a Gravatar-compatible profile says about a user: only what anyone may see on
// their public page (/u/{userId}), in Gravatar's field names. Unknown, hidden and unproven accounts
// have no profile. Authentication (a partner's api_token) lists every verified identity and adds
// the fields Gravatar gives only to authenticated requests; it never reveals a field the user kept
// private.
import type { Handle } from '../db/handle.js';
import type { AppContext } from '../context.js';
import { buildProfileUrl } from '../catalogue/profile-url.js';
import type { MarkEvidence } from '../domain/evidence.js';
import { isValidUserId } from '../domain/identifiers.js';
import { photoStampOf } from '../repositories/avatar-photos.js';
import { listCentralIdentities } from '../repositories/central-identities.js';
import { findProfileAccount, type AccountLookup, type ProfileAccount } from '../repositories/profile-accounts.js';
import { displayName } from '../site/views/PublicProfile.js';
import { profilePageUrl } from '../verification/verify.js';
import type { GravatarLink, GravatarProfile, GravatarVerifiedAccount } from './schemas.js';

/** Gravatar lists at most this many verified accounts to requests without authentication. */
export const UNAUTHENTICATED_VERIFIED_ACCOUNTS = 4;

/**
 * A profile identifier (Gravatar's: the SHA-256 of the address or a profile slug; idsvc also takes
 * the MD5 older Gravatar URLs carry), or undefined when it can name nobody.
 */
export function parseProfileIdentifier(raw: string): AccountLookup | undefined {
  const id = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(id)) return { kind: 'sha256', sha256: id.toLowerCase() };
  if (/^[0-9a-fA-F]{32}$/.test(id)) return { kind: 'md5', md5: id.toLowerCase() };
  return isValidUserId(id) ? { kind: 'userId', userId: id } : undefined;
}

/** A visible account by identifier; undefined for unknown, hidden and unproven accounts alike. */
export async function findVisibleAccount(from: Handle, lookup: AccountLookup): Promise<ProfileAccount | undefined> {
  const account = await findProfileAccount(from, lookup);
  return account?.visible ? account : undefined;
}

/**
 * The address hash the answer may carry. A caller who named the user by an address hash knows the
 * address already; one who named them by userId gets the hash only from a user who agreed to be
 * found by address (discoverable), or anyone could turn the public userIds into address hashes and
 * test guessed addresses against them offline.
 */
function shownHash(account: ProfileAccount, lookup: AccountLookup): string {
  return lookup.kind !== 'userId' || account.discoverable ? account.emailSha256 : '';
}

export function nameOf(account: ProfileAccount): string {
  return displayName({ userId: account.userId, fields: account.publicFields });
}

/** idsvc's additions to Gravatar's verified account, in Gravatar's snake_case. */
function evidenceFields(e: MarkEvidence | null): Partial<GravatarVerifiedAccount> {
  if (!e) return {};
  return {
    verified_by: e.verifiedBy,
    verified_at: e.verifiedAt,
    ...(e.lastCheckedAt !== undefined ? { last_checked_at: e.lastCheckedAt } : {}),
    ...(e.evidenceUrl !== undefined ? { evidence_url: e.evidenceUrl } : {}),
  };
}

const isoSeconds = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/** `from`: the handle `account` was read with (a replica's, or the database). */
export async function gravatarProfile(
  ctx: AppContext,
  account: ProfileAccount,
  lookup: AccountLookup,
  authenticated: boolean,
  from: Handle,
): Promise<GravatarProfile> {
  const snap = await ctx.catalogue.get();
  const verified: GravatarVerifiedAccount[] = [];
  const links: GravatarLink[] = [];
  const identities = (await listCentralIdentities(from, account.ref))
    .flatMap((i) => {
      const svc = snap.byId.get(i.svcId); // a disabled service is kept, not shown
      const url = svc ? buildProfileUrl(svc, i.usrSvcId) : '';
      return svc && url ? [{ svc, url, verified: i.verified, evidence: i.evidence }] : [];
    })
    .sort((a, b) => a.svc.svcName.toLowerCase().localeCompare(b.svc.svcName.toLowerCase()) || a.svc.svcId.localeCompare(b.svc.svcId));
  for (const { svc, url, verified: isVerified, evidence } of identities) {
    if (isVerified)
      verified.push({ service_type: svc.svcId, service_label: svc.svcName, service_icon: svc.svcFavicon, url, is_hidden: false, ...evidenceFields(evidence) });
    else links.push({ label: svc.svcName, url });
  }
  const f = account.publicFields;
  const hash = shownHash(account, lookup);
  const name = nameOf(account);
  const hasPhoto = (await photoStampOf(from, account.ref)) !== undefined;
  const profile: GravatarProfile = {
    hash,
    display_name: name,
    profile_url: profilePageUrl(ctx, account.userId),
    avatar_url: `${ctx.config.baseUrl}/avatar/${hash || account.userId}`,
    avatar_alt_text: hasPhoto ? `${name}'s photo` : `${name}'s initials`,
    location: [f.city, f.region, f.country].filter(Boolean).join(', '),
    description: f.bio ?? '',
    job_title: '',
    company: '',
    verified_accounts: authenticated ? verified : verified.slice(0, UNAUTHENTICATED_VERIFIED_ACCOUNTS),
    pronunciation: '',
    pronouns: '',
  };
  if (!authenticated) return profile;
  return {
    ...profile,
    ...(f.firstName ? { first_name: f.firstName } : {}),
    ...(f.lastName ? { last_name: f.lastName } : {}),
    links,
    number_verified_accounts: verified.length,
    last_profile_edit: null,
    registration_date: isoSeconds(account.createdAt),
  };
}
