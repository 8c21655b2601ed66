// Account-wide changes that partners must hear about (SPEC §3 rule 7, §4.7, §12).
import { recordLinkEvents } from '../repositories/partner-link-events.js';
import { deletePhoto } from '../repositories/avatar-photos.js';
import { deleteDiscoveryData } from '../repositories/discovery.js';
import { isDeepStrictEqual } from 'node:util';
import type { AppContext } from '../context.js';
import type { Write } from '../db/handle.js';
import { profileFields, type ProfileField } from '../domain/profile.js';
import { findSubjectOfUser, keepSubjectOfDeletedAccount } from '../repositories/people.js';
import { deleteUser, findUserByRef, setUserFlags, updateProfile, type ProfileValues, type User } from '../repositories/users.js';
import { deleteCentralIdentitiesOfUser } from '../repositories/central-identities.js';
import { deleteLinksOfUser, linkedPartners } from '../repositories/links.js';
import { endOtherSessions } from '../repositories/sessions.js';
import { deleteAttemptsOfUser } from '../repositories/verification-attempts.js';
import { announce, announceVisibility } from './central.js';
import { absorbOrphanSubjects } from './orphan-subjects.js';

/** The user's consent; they are shown only while their address is proven too (users.opted_in). */
export async function setOptIn(ctx: AppContext, user: User, optedIn: boolean): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.write(async (w) => {
    await setUserFlags(w, user.id, { optedIn }, now);
    await announceVisibility(w, user, now);
  });
}

/**
 * What `profile.updated` carries: the `profile` return_profile answers a linked partner (every
 * partner that hears of the user is linked to them, so the private view of SPEC §4.7), and which of
 * its fields the public view shows too.
 */
function profileAsLinkedPartnersSeeIt(ctx: AppContext, user: User) {
  return {
    profile: { userId: user.user_id, url: `${ctx.config.baseUrl}/u/${user.user_id}`, ...profileFields(user, 'all') },
    publicFields: Object.keys(profileFields(user, 'public')),
  };
}

/**
 * Saves profile fields and their public flags (site and CLI). Linked partners get
 * `profile.updated` when anything return_profile would answer them changed.
 */
export async function saveProfile(ctx: AppContext, user: User, values: ProfileValues, publicFields: ProfileField[] | undefined): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.write(async (w) => {
    const before = await findUserByRef(w, user.id);
    await updateProfile(w, user.id, values, publicFields, now);
    const after = await findUserByRef(w, user.id);
    if (!before || !after) return;
    const shown = profileAsLinkedPartnersSeeIt(ctx, after);
    if (isDeepStrictEqual(profileAsLinkedPartnersSeeIt(ctx, before), shown)) return;
    await announce(w, after, 'profile.updated', () => shown, now);
  });
}

/**
 * Erases the user, their central entries and links; linked partners get `user.deleted`. What
 * partners pushed stays theirs: the subject keeps the e-mail hashes and the userId, so each partner
 * still finds its own entries under the identifier it used (SPEC §3 rule 1). The userId is free to
 * be taken again; a new account that takes it takes the name only (services/orphan-subjects.ts).
 */
export async function deleteAccount(ctx: AppContext, user: User): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.write((w) => eraseAccount(w, user, now));
}

/** deleteAccount inside the caller's transaction. */
export async function eraseAccount(w: Write, user: User, now: number): Promise<void> {
  const partners = await linkedPartners(w, user.id);
  await announce(w, user, 'user.deleted', () => ({}), now, { only: partners });
  await deleteLinksOfUser(w, user.id);
  await recordLinkEvents(
    w,
    partners.map((p) => p.partner_id),
    'unlinked',
    'deletion',
    now,
  );
  await deleteCentralIdentitiesOfUser(w, user.id);
  await endOtherSessions(w, user.id, null);
  await deleteAttemptsOfUser(w, user.id);
  await deleteDiscoveryData(w, user.id);
  await deletePhoto(w, user.id);
  if ((await findSubjectOfUser(w, user.id)) !== undefined) {
    // A push that raced the account's creation may have left one of its names on a subject of its
    // own; fold it in first, so that every name is free to stay on the account's.
    await absorbOrphanSubjects(w, user, now);
    await keepSubjectOfDeletedAccount(w, user);
  }
  await deleteUser(w, user.id);
}
