// The public side of a user: what /u/{userId} and WebFinger show. Only opted-in users have one
// (SPEC §3 rule 2); unknown and hidden users look the same from outside.
import type { AppContext } from '../context.js';
import { parsePublicFields, PROFILE_FIELDS, type ProfileField } from '../domain/profile.js';
import { findUserByUserId, type User } from '../repositories/users.js';
import { centralEntries, entryUrl, bySvcName } from '../services/partner-data.js';
import { profilePageUrl } from '../verification/verify.js';

export interface PublicProfile {
  user: User;
  profileUrl: string;
  fields: Partial<Record<ProfileField, string>>;
  identities: { svcId: string; svcName: string; url: string; verified: boolean; verifiedBy: string | null; verifiedAt: number | null }[];
}

export async function findVisibleUser(ctx: AppContext, userId: string): Promise<User | undefined> {
  const user = await findUserByUserId(ctx.db, userId);
  return user?.opted_in ? user : undefined;
}

export async function publicProfileOf(ctx: AppContext, user: User): Promise<PublicProfile> {
  const pub = new Set(parsePublicFields(user.public_fields));
  const fields: Partial<Record<ProfileField, string>> = {};
  for (const [field, column] of PROFILE_FIELDS) {
    const v = user[column];
    if (v && pub.has(field)) fields[field] = v;
  }
  const entries = (await centralEntries(ctx.db, await ctx.catalogue.get(), user, 'anyone')).sort(bySvcName);
  return {
    user,
    profileUrl: profilePageUrl(ctx, user.user_id),
    fields,
    identities: entries.map((e) => ({
      svcId: e.svc.svcId,
      svcName: e.svc.svcName,
      url: entryUrl(e),
      verified: e.verified,
      verifiedBy: e.evidence?.verifiedBy ?? null,
      verifiedAt: e.evidence ? Date.parse(e.evidence.verifiedAt) : null,
    })),
  };
}
