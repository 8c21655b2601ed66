// Proof of e-mail ownership. A new account's address is unproven until its owner follows a
// single-use link mailed to it (24 hours). Until then the account names nobody to partners, takes
// in nothing they pushed about the address, and cannot be linked (repositories/people.ts,
// api/sync-user.ts). Sign-up answers the same whether or not the address has an account: what
// differs goes by mail, to the address.
//
// An unproven account does not keep the address from its owner: a sign-up for an address that an
// unproven account holds mails a "claim" link, and whoever proves the address first gets it (the
// unproven account is removed). Unproven accounts are also removed after UNPROVEN_ACCOUNT_DAYS.
import type { AppContext } from '../context.js';
import type { Write } from '../db/handle.js';
import { emailHashes } from '../domain/identifiers.js';
import { hashPassword } from '../domain/passwords.js';
import { sha256 } from '../domain/secrets.js';
import { mailSite, queueMail } from '../mail/index.js';
import { claimAddressMail } from '../mail/templates/claim-address.js';
import { confirmAddressMail } from '../mail/templates/confirm-address.js';
import { signUpAttemptMail } from '../mail/templates/signup-attempt.js';
import { createEmailToken, deleteExpiredTokens, endUserTokens, findUsableToken, useToken } from '../repositories/email-tokens.js';
import {
  type User,
  DuplicateUserError,
  findUserByEmail,
  findUserByRef,
  findUserByUserId,
  insertUser,
  isUnproven,
  listUnprovenBefore,
  markEmailProven,
} from '../repositories/users.js';
import { absorbOrphanSubjects } from './orphan-subjects.js';
import { announceVisibility } from './central.js';
import { eraseAccount } from './accounts.js';
import { isProvenAccount } from '../domain/visibility.js';

const HOUR = 3600 * 1000;
export const CONFIRM_LINK_HOURS = 24;
export const UNPROVEN_ACCOUNT_DAYS = 7;
/** Mails a stranger can cause to one address (sign-ups, resends): enough for a person, too few to flood. */
export const MAILS_PER_ADDRESS_PER_HOUR = 5;
/** "Send the link again", per account. */
export const RESENDS_PER_HOUR = 3;

const confirmLink = (ctx: AppContext, secret: string) => `${ctx.config.baseUrl}/confirm?token=${secret}`;

/** Counts one mail to this address; false when the hourly allowance is used up (the mail is then not sent). */
export async function mayMailAddress(ctx: AppContext, email: string): Promise<boolean> {
  const key = `mail:addr:${sha256(emailHashes(email).email)}`;
  if ((await ctx.throttle.blockedFor(key, MAILS_PER_ADDRESS_PER_HOUR)) > 0) return false;
  await ctx.throttle.recordFailure(key, 3600);
  return true;
}

/** A new confirmation link for an unproven account (older ones stop working), mailed to its address. */
export async function mailConfirmation(ctx: AppContext, w: Write, user: User, now: number, send: boolean): Promise<void> {
  await endUserTokens(w, user.id, 'confirm', now);
  const secret = await createEmailToken(w, { purpose: 'confirm', userRef: user.id, email: user.email }, now, CONFIRM_LINK_HOURS * HOUR);
  if (!send) return;
  const mail = confirmAddressMail(mailSite(ctx.config), { userId: user.user_id, link: confirmLink(ctx, secret), hours: CONFIRM_LINK_HOURS });
  await queueMail(w, { to: user.email, ...mail }, now);
}

export interface SignUpInput {
  email: string;
  userId: string;
  password: string;
  optedIn: boolean;
}

/**
 * Signs up. Throws DuplicateUserError('userId') when the userId is taken (userIds are public);
 * otherwise answers nothing, whatever the address: a new address gets an unproven account and a
 * confirmation link, an address with a proven account a note to its owner, and an address held
 * by an unproven account a claim link.
 */
export async function signUp(ctx: AppContext, input: SignUpInput): Promise<void> {
  // Hashed in every case, so that the answer takes as long whether or not the address is known.
  const passwordHash = await hashPassword(input.password, ctx.config.argon2Cost);
  const email = emailHashes(input.email).email;
  const send = await mayMailAddress(ctx, email);
  const now = ctx.clock.now();
  const site = mailSite(ctx.config);
  await ctx.db.write(async (w) => {
    if (await findUserByUserId(w, input.userId)) throw new DuplicateUserError('userId');
    const holder = await findUserByEmail(w, email);
    if (!holder) {
      const user = await insertUser(w, { email, userId: input.userId, passwordHash, optedIn: input.optedIn, proven: false }, now);
      await mailConfirmation(ctx, w, user, now, send);
    } else if (isProvenAccount(holder)) {
      if (!send) return;
      const mail = signUpAttemptMail(site, { userId: holder.user_id, loginUrl: `${site.baseUrl}/login`, resetUrl: `${site.baseUrl}/forgot` });
      await queueMail(w, { to: holder.email, ...mail }, now);
    } else {
      const secret = await createEmailToken(
        w,
        { purpose: 'claim', userRef: null, email, claim: { userId: input.userId, passwordHash, consented: input.optedIn } },
        now,
        CONFIRM_LINK_HOURS * HOUR,
      );
      if (!send) return;
      const mail = claimAddressMail(site, { newUserId: input.userId, holderUserId: holder.user_id, link: confirmLink(ctx, secret), hours: CONFIRM_LINK_HOURS });
      await queueMail(w, { to: email, ...mail }, now);
    }
  });
}

/** An account the operator creates without vouching for its address: unproven, with a link mailed. */
export async function createUnprovenAccount(ctx: AppContext, input: { email: string; userId: string; passwordHash: string; optedIn: boolean }): Promise<User> {
  const now = ctx.clock.now();
  return ctx.db.write(async (w) => {
    const user = await insertUser(w, { ...input, proven: false }, now);
    await mailConfirmation(ctx, w, user, now, true);
    return user;
  });
}

export type ResendOutcome = { sent: true } | { sent: false; retryAfterSeconds: number };

/** "Send the link again" on the account page: throttled per account and per address. */
export async function resendConfirmation(ctx: AppContext, user: User): Promise<ResendOutcome> {
  if (isProvenAccount(user)) return { sent: true };
  const key = `mail:resend:${user.id}`;
  const wait = await ctx.throttle.blockedFor(key, RESENDS_PER_HOUR);
  if (wait > 0) return { sent: false, retryAfterSeconds: wait };
  await ctx.throttle.recordFailure(key, 3600);
  if (!(await mayMailAddress(ctx, user.email))) return { sent: false, retryAfterSeconds: 3600 };
  const now = ctx.clock.now();
  await ctx.db.write((w) => mailConfirmation(ctx, w, user, now, true));
  return { sent: true };
}

/** What a link is about, for the page that asks to confirm (a GET never uses the link up). */
export type LinkPreview = { purpose: 'confirm'; userId: string } | { purpose: 'claim'; userId: string; holderUserId: string | null };

export async function previewLink(ctx: AppContext, secret: string): Promise<LinkPreview | undefined> {
  const db = ctx.db;
  const row = await findUsableToken(db, secret, ['confirm', 'claim'], ctx.clock.now());
  if (!row) return undefined;
  if (row.purpose === 'confirm') {
    const user = row.user_ref === null ? undefined : await findUserByRef(db, row.user_ref);
    return user && user.email === row.email ? { purpose: 'confirm', userId: user.user_id } : undefined;
  }
  const holder = await findUserByEmail(db, row.email);
  return { purpose: 'claim', userId: row.new_user_id ?? '', holderUserId: holder && !isProvenAccount(holder) ? holder.user_id : null };
}

export type FollowOutcome =
  /** The account's address is proven (now, or it was already). */
  | { kind: 'confirmed'; userRef: number }
  /** A claim: the account was created, proven; an unproven account holding the address was removed. */
  | { kind: 'created'; userRef: number }
  /** Unknown, used or expired. */
  | { kind: 'invalid' }
  /** A claim for an address that another account proved meanwhile. */
  | { kind: 'address_taken' }
  /** A claim whose userId someone took meanwhile (the link still works for nothing else: sign up again). */
  | { kind: 'user_id_taken'; userId: string };

/** Following a link proves the address it was sent to. */
export async function followLink(ctx: AppContext, secret: string): Promise<FollowOutcome> {
  const now = ctx.clock.now();
  const row = await findUsableToken(ctx.db, secret, ['confirm', 'claim'], now);
  if (!row) return { kind: 'invalid' };
  return ctx.db.write(async (w): Promise<FollowOutcome> => {
    if (row.purpose === 'confirm') {
      const user = row.user_ref === null ? undefined : await findUserByRef(w, row.user_ref);
      // A link proves the address it was sent to, and only while the account still has it.
      if (!user || user.email !== row.email || !(await useToken(w, row.id, now))) return { kind: 'invalid' };
      const proven = await markEmailProven(w, user.id, now);
      if (proven) await absorbOrphanSubjects(w, proven, now);
      // Proof may make the user visible: whoever is linked hears it (nobody yet, but the record says so).
      await announceVisibility(w, user, now);
      await endUserTokens(w, user.id, 'confirm', now);
      return { kind: 'confirmed', userRef: user.id };
    }
    const holder = await findUserByEmail(w, row.email);
    if (holder && isProvenAccount(holder)) {
      await useToken(w, row.id, now);
      return { kind: 'address_taken' };
    }
    const userId = row.new_user_id ?? '';
    const owner = await findUserByUserId(w, userId);
    // The unproven account that yields frees its userId too.
    if (owner && owner.id !== holder?.id) return { kind: 'user_id_taken', userId };
    if (!(await useToken(w, row.id, now))) return { kind: 'invalid' };
    if (holder) await eraseAccount(w, holder, now);
    const user = await insertUser(w, { email: row.email, userId, passwordHash: row.password_hash ?? '', optedIn: row.consented === true, proven: true }, now);
    await absorbOrphanSubjects(w, user, now);
    return { kind: 'created', userRef: user.id };
  });
}

/** Housekeeping (site-sweep): unproven accounts past their days, and links long expired. */
export async function sweepUnproven(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now();
  const stale = await listUnprovenBefore(ctx.db, now - UNPROVEN_ACCOUNT_DAYS * 24 * HOUR, 500);
  for (const user of stale) {
    await ctx.db.write(async (w) => {
      // Proven meanwhile? Then it stays.
      if (await isUnproven(w, user.id)) await eraseAccount(w, user, now);
    });
  }
  await ctx.db.write((w) => deleteExpiredTokens(w, now - 24 * HOUR));
  return stale.length;
}
