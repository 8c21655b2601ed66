// Account recovery and password changes. "Forgot password" mails a single-use link (1 hour) and
// answers the same for an address without an account; using the link sets the password, ends every
// session of the account, proves the address (the link reached it) and sends a notice. Changing the
// password on the account page asks for the current one and sends the same notice.
import type { AppContext } from '../context.js';
import { emailHashes } from '../domain/identifiers.js';
import { hashPassword } from '../domain/passwords.js';
import { sha256 } from '../domain/secrets.js';
import { mailSite, queueMail } from '../mail/index.js';
import { passwordChangedMail } from '../mail/templates/password-changed.js';
import { resetPasswordMail } from '../mail/templates/reset-password.js';
import { createEmailToken, endUserTokens, findUsableToken, useToken } from '../repositories/email-tokens.js';
import { endOtherSessions } from '../repositories/sessions.js';
import { findUserByEmail, findUserByRef, markEmailProven, setPasswordHash, type User } from '../repositories/users.js';
import { announceVisibility } from './central.js';
import { absorbOrphanSubjects } from './orphan-subjects.js';
import { MAILS_PER_ADDRESS_PER_HOUR } from './ownership.js';

export const RESET_LINK_MINUTES = 60;
/** Reset links per account an hour, whatever address asks. */
export const RESETS_PER_ACCOUNT_PER_HOUR = 3;

/**
 * Mails a reset link when the address has an account, within the limits per address and per
 * account; answers nothing either way, so the page cannot tell who has an account.
 */
export async function requestPasswordReset(ctx: AppContext, email: string): Promise<void> {
  const address = emailHashes(email).email;
  const addrKey = `mail:addr:${sha256(address)}`;
  if ((await ctx.throttle.blockedFor(addrKey, MAILS_PER_ADDRESS_PER_HOUR)) > 0) return;
  await ctx.throttle.recordFailure(addrKey, 3600);
  const user = await findUserByEmail(ctx.db, address);
  if (!user) return;
  const acctKey = `mail:reset:${user.id}`;
  if ((await ctx.throttle.blockedFor(acctKey, RESETS_PER_ACCOUNT_PER_HOUR)) > 0) return;
  await ctx.throttle.recordFailure(acctKey, 3600);
  const now = ctx.clock.now();
  await ctx.db.write(async (w) => {
    const secret = await createEmailToken(w, { purpose: 'reset', userRef: user.id, email: user.email }, now, RESET_LINK_MINUTES * 60_000);
    const mail = resetPasswordMail(mailSite(ctx.config), {
      userId: user.user_id,
      link: `${ctx.config.baseUrl}/reset?token=${secret}`,
      minutes: RESET_LINK_MINUTES,
    });
    await queueMail(w, { to: user.email, ...mail }, now);
  });
}

/** The account a reset link is for, if the link still works (a GET never uses it up). */
export async function resetLinkUser(ctx: AppContext, secret: string): Promise<{ userId: string; email: string; names: (string | null)[] } | undefined> {
  const row = await findUsableToken(ctx.db, secret, ['reset'], ctx.clock.now());
  if (!row || row.user_ref === null) return undefined;
  const user = await findUserByRef(ctx.db, row.user_ref);
  // The names let the new password be judged against the account's own words, as at sign-up.
  return user && user.email === row.email ? { userId: user.user_id, email: user.email, names: [user.nickname, user.first_name, user.last_name] } : undefined;
}

/** Sets the new password through a reset link; false when the link is unknown, used or expired. */
export async function resetPassword(ctx: AppContext, secret: string, newPassword: string): Promise<boolean> {
  const passwordHash = await hashPassword(newPassword, ctx.config.argon2Cost);
  const now = ctx.clock.now();
  const row = await findUsableToken(ctx.db, secret, ['reset'], now);
  if (!row || row.user_ref === null) return false;
  const userRef = row.user_ref;
  return ctx.db.write(async (w) => {
    const user = await findUserByRef(w, userRef);
    if (!user || user.email !== row.email || !(await useToken(w, row.id, now))) return false;
    await setPasswordHash(w, user.id, passwordHash, now);
    await endUserTokens(w, user.id, 'reset', now);
    await endOtherSessions(w, user.id, null);
    // The link reached the address: that proves it, as the confirmation link would.
    const proven = await markEmailProven(w, user.id, now);
    if (proven) {
      await absorbOrphanSubjects(w, proven, now);
      await endUserTokens(w, user.id, 'confirm', now);
      await announceVisibility(w, user, now);
    }
    await queueMail(
      w,
      { to: user.email, ...passwordChangedMail(mailSite(ctx.config), { userId: user.user_id, how: 'reset', resetUrl: `${ctx.config.baseUrl}/forgot` }) },
      now,
    );
    return true;
  });
}

/** The account page's change (the current password was checked by the caller): other sessions end. */
export async function changePassword(ctx: AppContext, user: User, newPassword: string, keepSessionId: string | null): Promise<void> {
  const passwordHash = await hashPassword(newPassword, ctx.config.argon2Cost);
  const now = ctx.clock.now();
  await ctx.db.write(async (w) => {
    await setPasswordHash(w, user.id, passwordHash, now);
    await endUserTokens(w, user.id, 'reset', now);
    await endOtherSessions(w, user.id, keepSessionId);
    await queueMail(
      w,
      { to: user.email, ...passwordChangedMail(mailSite(ctx.config), { userId: user.user_id, how: 'changed', resetUrl: `${ctx.config.baseUrl}/forgot` }) },
      now,
    );
  });
}
