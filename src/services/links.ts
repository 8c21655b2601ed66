// sync_user / unsync_user (SPEC §4.5, §4.6, §9): linking a partner's repository for one person to a
// user's account, with the copy-in at link time, and credential checks that are throttled before
// any hashing and answer identically for an unknown address and a wrong password.
import { recordLinkEvents } from '../repositories/partner-link-events.js';
import type { AppContext } from '../context.js';
import { errors } from '../domain/errors.js';
import { emailHashes, type ParsedIdentifier } from '../domain/identifiers.js';
import { burnPasswordCheck, verifyPassword } from '../domain/passwords.js';
import { centralServicesOfUser } from '../repositories/central-identities.js';
import { deleteLink, findLink, findLinkOfSubject, insertLink, moveLink } from '../repositories/links.js';
import { pushedEntriesInOrder } from '../repositories/partner-identities.js';
import type { Partner } from '../repositories/partners.js';
import { lookupOrCreatePerson, lookupPerson } from '../repositories/people.js';
import { findUserByEmail, findUserByRef, type User } from '../repositories/users.js';
import { mailSite, queueMail } from '../mail/index.js';
import { partnerLinkedMail } from '../mail/templates/partner-linked.js';
import { announce, setCentralIdentity } from './central.js';

export interface Credentials {
  email: string;
  password: string;
  /** Where the person is (the partner's end user), for throttling; else the caller's address. */
  clientAddress: string;
}

/**
 * Three counters of failures, in the spirit of the site's log-in throttle:
 *
 * - per account, partner and end-user address: low, so one place cannot guess at one account for long;
 * - per partner and end-user address, over all accounts: stops one place spraying many accounts;
 * - per account, over every partner and address: a much higher ceiling that stops a distributed attack.
 *
 * A stranger's failures elsewhere count only towards the ceiling, so they cannot stop the owner
 * from syncing from her own address and partner until a distributed attack reaches it.
 */
function throttleKeys(partner: Partner, c: Credentials) {
  const account = emailHashes(c.email).sha256;
  return {
    place: `cred:apa:${account}:${partner.id}:${c.clientAddress}`,
    origin: `cred:pa:${partner.id}:${c.clientAddress}`,
    account: `cred:acct:${account}`,
  };
}

/** Checks e-mail and password, throttled (before any hashing) by the three counters of throttleKeys. */
export async function checkCredentials(ctx: AppContext, partner: Partner, c: Credentials): Promise<User> {
  const keys = throttleKeys(partner, c);
  const cfg = ctx.config;
  const t = ctx.throttle;
  const wait = Math.max(
    ...(await Promise.all([
      t.blockedFor(keys.place, cfg.syncFailuresPerAccountAddress),
      t.blockedFor(keys.origin, cfg.syncFailuresPerPartnerAddress),
      t.blockedFor(keys.account, cfg.syncFailuresPerAccount),
    ])),
  );
  if (wait > 0) throw errors.rateLimited(wait);
  const user = await findUserByEmail(ctx.db, c.email);
  const ok = user ? await verifyPassword(user.password_hash, c.password) : await burnPasswordCheck(c.password, ctx.config.argon2Cost);
  if (!user || !ok) {
    for (const key of [keys.place, keys.origin, keys.account]) await t.recordFailure(key, cfg.syncFailureWindowSeconds);
    throw errors.invalidCredentials();
  }
  // Only this place starts over: the account-wide ceiling runs out with its window, so the owner's
  // success in the middle of an attack does not hand the attackers a fresh allowance.
  await t.reset(keys.place);
  return user;
}

/** How the partner names the person in webhooks: as it did, except that an address becomes its MD5. */
function identifierForPartner(id: ParsedIdentifier, raw: string): string {
  return id.kind === 'email' ? id.md5 : raw.trim().toLowerCase();
}

export async function linkUser(ctx: AppContext, partner: Partner, id: ParsedIdentifier, rawIdentifier: string, user: User): Promise<void> {
  const now = ctx.clock.now();
  // Read before the transaction: on SQLite the one connection is held by the transaction, so a
  // query outside it would wait forever.
  const snap = await ctx.catalogue.get();
  await ctx.db.write(async (w) => {
    const person = await lookupOrCreatePerson(w, id, now);
    const existing = await findLinkOfSubject(w, partner.id, person.subjectId);
    if (existing && existing.user_ref === user.id) return; // already linked: true again, nothing new
    // The person proved a different account: the link moves to it.
    if (existing) await moveLink(w, existing.id, user.id, now);
    else
      await insertLink(
        w,
        { partnerId: partner.id, subjectId: person.subjectId, userRef: user.id, userIdentifier: identifierForPartner(id, rawIdentifier) },
        now,
      );
    await recordLinkEvents(w, [partner.id], 'linked', 'partner', now);
    await announce(w, user, 'link.created', () => ({ partner: partner.name }), now, { except: partner.id });
    // Like "a new application was authorised": the owner hears of every new link.
    const site = mailSite(ctx.config);
    await queueMail(
      w,
      { to: user.email, ...partnerLinkedMail(site, { userId: user.user_id, partner: partner.name, linksUrl: `${site.baseUrl}/account/sites#links` }) },
      now,
    );
    // Copy-in: the partner's entries fill services the central repository does not have yet.
    const own = await pushedEntriesInOrder(w, partner.id, person.subjectId);
    const have = await centralServicesOfUser(w, user.id);
    for (const e of own) {
      const svc = snap.byId.get(e.svc_id);
      if (!svc || have.has(e.svc_id)) continue;
      await setCentralIdentity(w, user, svc, e.usr_svc_id, { partnerId: partner.id }, now);
    }
  });
}

export async function unlinkUser(ctx: AppContext, partner: Partner, id: ParsedIdentifier, credentials: Credentials | null): Promise<User> {
  const person = await lookupPerson(ctx.db, id);
  const link = await findLink(ctx.db, partner.id, person);
  if (!link) throw errors.linkNotFound();
  if (credentials) {
    const user = await checkCredentials(ctx, partner, credentials);
    if (user.id !== link.user_ref) throw errors.invalidCredentials();
  }
  const now = ctx.clock.now();
  return ctx.db.write(async (w) => {
    const user = await findUserByRef(w, link.user_ref);
    if (!user) throw new Error('a link names an account that does not exist');
    await deleteLink(w, link.id);
    await recordLinkEvents(w, [partner.id], 'unlinked', 'partner', now);
    await announce(w, user, 'link.removed', () => ({ partner: partner.name }), now, { except: partner.id });
    return user;
  });
}
