// Connections to sign-in providers (docs/spec.md "Sign-in providers"): what a provider's answer
// may do to accounts. A connection links one provider account (by its stable id) to one idsvc
// account; it logs in to that account, and for GitHub and GitLab it proves the person's identity
// there (method `oauth`). A provider's e-mail address is used only when the provider says it is
// verified, and never attaches a connection to an account the person has not logged in to.
// Every connection and removal is mailed to the account's address.
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import type { ProviderAccount } from '../connections/oauth-client.js';
import { accountRecordUrl, providerFamily, type ProviderSettings } from '../connections/providers.js';
import type { AppContext } from '../context.js';
import type { Write } from '../db/handle.js';
import { emailHashes } from '../domain/identifiers.js';
import { mailSite, queueMail } from '../mail/index.js';
import { providerConnectionMail } from '../mail/templates/provider-connection.js';
import { signUpAttemptMail } from '../mail/templates/signup-attempt.js';
import { findCentralIdentity, recordCheck } from '../repositories/central-identities.js';
import {
  connectionsOfUser,
  deleteConnection,
  findConnection,
  insertConnection,
  recordConnectionLogin,
  type ProviderConnection,
} from '../repositories/provider-connections.js';
import { DuplicateUserError, findUserByEmail, findUserByRef, findUserByUserId, insertUser, type User } from '../repositories/users.js';
import { insertVerificationAttempt } from '../repositories/verification-attempts.js';
import { RECHECK_AFTER_MS } from '../verification/verify.js';
import { announce, identityData, setCentralIdentity, verificationData } from './central.js';
import { absorbOrphanSubjects } from './orphan-subjects.js';
import { mailConfirmation, mayMailAddress } from './ownership.js';

async function mailChange(
  ctx: AppContext,
  tx: Write,
  user: User,
  p: ProviderSettings,
  account: string | null,
  change: 'connected' | 'disconnected',
  now: number,
) {
  const site = mailSite(ctx.config);
  const mail = providerConnectionMail(site, {
    userId: user.user_id,
    provider: p.name,
    account,
    change,
    securityUrl: `${site.baseUrl}/account/security`,
    resetUrl: `${site.baseUrl}/forgot`,
  });
  await queueMail(tx, { to: user.email, ...mail }, now);
}

/**
 * Marks the person's identity on the provider's service verified by the connection: the entry is
 * created with the account's current name when absent, renamed to it when it names someone else.
 */
async function proveIdentity(
  tx: Write,
  user: User,
  p: ProviderSettings,
  svc: CatalogueEntry | undefined,
  account: ProviderAccount,
  now: number,
): Promise<void> {
  if (!svc || !account.username) return;
  const { row: before } = await setCentralIdentity(tx, user, svc, account.username, { partnerId: null }, now);
  const evidenceUrl = accountRecordUrl(p, account.subject);
  const after = await recordCheck(
    tx,
    before.id,
    {
      verified: true,
      verified_by: 'oauth',
      verified_at: before.verified && before.verified_at !== null ? before.verified_at : now,
      evidence_url: evidenceUrl,
      negative_since: null,
      next_check_at: now + RECHECK_AFTER_MS,
    },
    now,
  );
  await insertVerificationAttempt(
    tx,
    {
      identityId: after.id,
      userRef: user.id,
      svcId: svc.svcId,
      url: evidenceUrl ?? '',
      outcome: 'verified',
      detail: `you signed in to ${p.name} as ${account.username} and connected that account`,
      method: 'oauth',
      status: null,
    },
    now,
  );
  if (!before.verified) {
    await announce(tx, user, 'identity.updated', identityData(user, svc, after), now);
    await announce(tx, user, 'identity.verified', verificationData(user, svc, after, null), now);
  }
}

/** A disconnection takes back the mark the connection gave; one earned another way stays. */
async function unproveIdentity(tx: Write, user: User, p: ProviderSettings, svc: CatalogueEntry | undefined, now: number): Promise<void> {
  const entry = svc && (await findCentralIdentity(tx, user.id, svc.svcId));
  if (!svc || !entry?.verified || entry.verified_by !== 'oauth') return;
  const after = await recordCheck(
    tx,
    entry.id,
    { verified: false, verified_by: null, verified_at: null, evidence_url: null, negative_since: null, next_check_at: now },
    now,
  );
  await announce(tx, user, 'identity.updated', identityData(user, svc, after), now);
  const reason = { method: 'oauth' as const, evidenceUrl: null, detail: `the person disconnected their ${p.name} account` };
  await announce(tx, user, 'identity.unverified', verificationData(user, svc, after, reason), now);
}

/**
 * The catalogue entry a provider's connection proves. Read before a transaction opens: the catalogue
 * may reload through the database handle, which on SQLite waits for the open transaction.
 */
async function provedService(ctx: AppContext, p: ProviderSettings): Promise<CatalogueEntry | undefined> {
  return p.provesSvcId ? (await ctx.catalogue.get()).byId.get(p.provesSvcId) : undefined;
}

async function attach(
  ctx: AppContext,
  tx: Write,
  user: User,
  p: ProviderSettings,
  svc: CatalogueEntry | undefined,
  account: ProviderAccount,
  now: number,
): Promise<ProviderConnection> {
  const connection = await insertConnection(tx, { userRef: user.id, provider: p.key, subject: account.subject, username: account.username }, now);
  await proveIdentity(tx, user, p, svc, account, now);
  await mailChange(ctx, tx, user, p, account.username, 'connected', now);
  return connection;
}

export type ConnectOutcome = 'connected' | 'already_connected' | 'connected_elsewhere' | 'provider_taken';

/** Connects a provider account to the logged-in person's account. */
export async function connectProvider(ctx: AppContext, user: User, p: ProviderSettings, account: ProviderAccount): Promise<ConnectOutcome> {
  const now = ctx.clock.now();
  const svc = await provedService(ctx, p);
  return ctx.db.write(async (tx): Promise<ConnectOutcome> => {
    const existing = await findConnection(tx, p.key, account.subject);
    if (existing) {
      if (existing.userRef !== user.id) return 'connected_elsewhere';
      await proveIdentity(tx, user, p, svc, account, now);
      return 'already_connected';
    }
    // One account per provider (one Mastodon account, whatever its server): a second would make
    // "which one proves the identity" ambiguous.
    const family = providerFamily(p.key);
    if ((await connectionsOfUser(tx, user.id)).some((c) => providerFamily(c.provider) === family)) return 'provider_taken';
    await attach(ctx, tx, user, p, svc, account, now);
    return 'connected';
  });
}

export async function disconnectProvider(ctx: AppContext, user: User, p: ProviderSettings | undefined, connectionId: number): Promise<boolean> {
  const now = ctx.clock.now();
  const svc = p && (await provedService(ctx, p));
  return ctx.db.write(async (tx) => {
    const removed = await deleteConnection(tx, user.id, connectionId);
    if (!removed) return false;
    const settings: ProviderSettings = p ?? {
      key: removed.provider,
      slug: '',
      kind: 'oidc',
      name: removed.provider,
      clientId: '',
      clientSecret: '',
      issuer: '',
      provesSvcId: null,
    };
    await unproveIdentity(tx, user, settings, svc, now);
    await mailChange(ctx, tx, user, settings, removed.username, 'disconnected', now);
    return true;
  });
}

export type LogInOutcome =
  /** A connected account: log in. */
  | { kind: 'log_in'; user: User }
  /** The provider's verified address is another account's: log in to it first, then connect. */
  | { kind: 'address_has_account' }
  /** Nobody: the person may create an account. */
  | { kind: 'sign_up' };

export async function logInWithProvider(ctx: AppContext, p: ProviderSettings, account: ProviderAccount): Promise<LogInOutcome> {
  const db = ctx.db;
  const connection = await findConnection(db, p.key, account.subject);
  if (connection) {
    const user = await findUserByRef(db, connection.userRef);
    if (user) {
      await db.write((w) => recordConnectionLogin(w, connection.id, account.username ?? connection.username, ctx.clock.now()));
      return { kind: 'log_in', user };
    }
  }
  // Only an address the provider verified is worth comparing: an unverified one proves nothing, and
  // saying it matched would tell its owner's secret to whoever typed it at the provider.
  if (account.emailVerified && account.email && (await findUserByEmail(db, account.email))) return { kind: 'address_has_account' };
  return { kind: 'sign_up' };
}

export type ProviderSignUpOutcome =
  /** Created with the provider's verified address, proven: log in. */
  | { kind: 'created'; user: User }
  /** The answer whatever became of an address the person typed: what differs goes by mail. */
  | { kind: 'check_inbox' }
  | { kind: 'user_id_taken' }
  | { kind: 'address_has_account' }
  /** The provider account was connected to an account meanwhile. */
  | { kind: 'connected_meanwhile' };

/**
 * A new account from a provider. With the provider's verified address, the account is created with
 * it proven. Otherwise the person typed an address: as at the sign-up form, a free address gets an
 * unproven account (with the connection) and a confirmation link, and an address that has an account
 * a note to its owner; the page answers the same in both cases.
 */
export async function signUpWithProvider(
  ctx: AppContext,
  p: ProviderSettings,
  account: ProviderAccount,
  input: { userId: string; optedIn: boolean; typedEmail: string | null },
): Promise<ProviderSignUpOutcome> {
  const now = ctx.clock.now();
  const verified = account.emailVerified && account.email !== null;
  const email = emailHashes(verified ? (account.email ?? '') : (input.typedEmail ?? '')).email;
  const send = verified ? true : await mayMailAddress(ctx, email);
  const svc = await provedService(ctx, p);
  try {
    return await ctx.db.write(async (tx): Promise<ProviderSignUpOutcome> => {
      if (await findConnection(tx, p.key, account.subject)) return { kind: 'connected_meanwhile' };
      if (await findUserByUserId(tx, input.userId)) return { kind: 'user_id_taken' };
      const holder = await findUserByEmail(tx, email);
      if (holder) {
        if (verified) return { kind: 'address_has_account' };
        if (send) {
          const site = mailSite(ctx.config);
          const mail = signUpAttemptMail(site, { userId: holder.user_id, loginUrl: `${site.baseUrl}/login`, resetUrl: `${site.baseUrl}/forgot` });
          await queueMail(tx, { to: holder.email, ...mail }, now);
        }
        return { kind: 'check_inbox' };
      }
      // No password: the account logs in through its provider, or sets one with "forgot password".
      const user = await insertUser(tx, { email, userId: input.userId, passwordHash: '', optedIn: input.optedIn, proven: verified }, now);
      if (verified) await absorbOrphanSubjects(tx, user, now);
      else await mailConfirmation(ctx, tx, user, now, send);
      await attach(ctx, tx, user, p, svc, account, now);
      return verified ? { kind: 'created', user } : { kind: 'check_inbox' };
    });
  } catch (e) {
    if (e instanceof DuplicateUserError)
      return e.field === 'userId' ? { kind: 'user_id_taken' } : verified ? { kind: 'address_has_account' } : { kind: 'check_inbox' };
    throw e;
  }
}
