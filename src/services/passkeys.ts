// Passkeys (WebAuthn, through @simplewebauthn/server): adding one to an account, logging in with
// one, removing one. The relying party is the site at BASE_URL: its host is the RP ID and its
// origin the only origin accepted. Attestation is not asked for ("none"): a passkey proves it holds
// its key, not which maker built it. User verification is preferred, not required, so security keys
// without a PIN still work. Every challenge is stored server-side, bound to what asked for it, lives
// a few minutes and is taken out of the table by the first answer (passkey-challenges.ts).
import { randomBytes } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
  VerifiedRegistrationResponse,
} from '@simplewebauthn/server';
import type { Config } from '../config.js';
import type { AppContext } from '../context.js';
import { mailSite, queueMail } from '../mail/index.js';
import { passkeyChangedMail } from '../mail/templates/passkey-changed.js';
import { saveChallenge, takeChallenge } from '../repositories/passkey-challenges.js';
import {
  countPasskeys,
  deletePasskeyOfUser,
  findPasskeyByCredentialId,
  insertPasskey,
  type Passkey,
  passkeysOfUser,
  recordPasskeyUse,
} from '../repositories/passkeys.js';
import { findUserByRef, type User } from '../repositories/users.js';

// Loaded at the first ceremony, not at start-up: with its ASN.1 and X.509 libraries it is the
// costliest module of the service to load, and most starts (each CLI command, each instance that
// no one adds a passkey on) never use it.
let webauthnModule: Promise<typeof import('@simplewebauthn/server')> | undefined;
const webauthn = () => (webauthnModule ??= import('@simplewebauthn/server'));

/** How long a browser has to answer a challenge; the ceremony's own timeout is a little shorter. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
const CEREMONY_TIMEOUT_MS = 4 * 60_000;
/** Enough for every device a person owns; a bound on the list and on what a stolen session can add. */
export const MAX_PASSKEYS_PER_ACCOUNT = 20;
export const PASSKEY_NAME_MAX = 64;

export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

/**
 * The relying party of this installation, or null when passkeys cannot work here: browsers offer
 * WebAuthn only to secure origins whose host is a domain name, so BASE_URL must be https, or http
 * on localhost for development (an IP address is never a valid RP ID).
 */
export function relyingParty(config: Pick<Config, 'baseUrl' | 'siteName'>): RelyingParty | null {
  const url = new URL(config.baseUrl);
  const host = url.hostname;
  const localhost = host === 'localhost' || host.endsWith('.localhost');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && localhost)) return null;
  if (/^[\d.]+$/.test(host) || host.startsWith('[')) return null;
  return { id: host, origin: url.origin, name: config.siteName };
}

/** Why a passkey was not added, in words for the person. */
export class PasskeyRefused extends Error {}

/** Letters, digits, spaces and punctuation; no control characters; trimmed. */
export function cleanPasskeyName(raw: string): string {
  return raw
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, PASSKEY_NAME_MAX);
}

const addBinding = (sessionId: string) => `add:${sessionId}`;
const loginBinding = (attempt: string) => `login:${attempt}`;

/** The options for navigator.credentials.create(), with the challenge kept for this session. */
export async function startAddingPasskey(
  ctx: AppContext,
  rp: RelyingParty,
  user: User,
  sessionId: string,
  name: string,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await passkeysOfUser(ctx.db, user.id);
  if (existing.length >= MAX_PASSKEYS_PER_ACCOUNT)
    throw new PasskeyRefused(`An account can have at most ${MAX_PASSKEYS_PER_ACCOUNT} passkeys. Remove one first.`);
  const options = await (await webauthn()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.user_id,
    userDisplayName: user.user_id,
    userID: randomBytes(32),
    attestationType: 'none',
    timeout: CEREMONY_TIMEOUT_MS,
    // A passkey is a discoverable credential: logging in with it needs no name typed first.
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
  });
  // The user handle travels with the challenge: it is what the authenticator will keep.
  await ctx.db.write((w) =>
    saveChallenge(w, addBinding(sessionId), {
      challenge: options.challenge,
      userRef: user.id,
      label: name,
      userHandle: options.user.id,
      expiresAt: ctx.clock.now() + CHALLENGE_TTL_MS,
    }),
  );
  return options;
}

/** Checks the browser's answer to the session's challenge and keeps the passkey; mails the owner. */
export async function finishAddingPasskey(
  ctx: AppContext,
  rp: RelyingParty,
  user: User,
  sessionId: string,
  response: RegistrationResponseJSON,
): Promise<string> {
  const now = ctx.clock.now();
  const challenge = await ctx.db.write((w) => takeChallenge(w, addBinding(sessionId), now));
  const name = challenge?.label;
  const userHandle = challenge?.userHandle;
  if (!challenge || challenge.userRef !== user.id || !name || !userHandle) {
    throw new PasskeyRefused('That took too long, or the page was used twice. Try again.');
  }
  let verified: VerifiedRegistrationResponse;
  try {
    verified = await (await webauthn()).verifyRegistrationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
  } catch {
    verified = { verified: false };
  }
  if (!verified.verified) throw new PasskeyRefused('The passkey could not be checked. Try again, or with another device.');
  const { credential } = verified.registrationInfo;
  await ctx.db.write(async (tx) => {
    if (await findPasskeyByCredentialId(tx, credential.id)) throw new PasskeyRefused('That passkey is already registered.');
    if ((await countPasskeys(tx, user.id)) >= MAX_PASSKEYS_PER_ACCOUNT) {
      throw new PasskeyRefused(`An account can have at most ${MAX_PASSKEYS_PER_ACCOUNT} passkeys. Remove one first.`);
    }
    const added = await insertPasskey(
      tx,
      {
        userRef: user.id,
        credentialId: credential.id,
        publicKey: credential.publicKey,
        counter: credential.counter,
        userHandle,
        transports: credential.transports ?? response.response.transports ?? [],
        name,
      },
      now,
    );
    if (added === null) throw new PasskeyRefused('That passkey is already registered.');
    await queueMail(tx, { to: user.email, ...changedMail(ctx, user, 'added', name) }, now);
  });
  return name;
}

/** The options for navigator.credentials.get(), with the challenge kept for this log-in attempt. */
export async function startPasskeyLogin(ctx: AppContext, rp: RelyingParty, attempt: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  // No allowCredentials: naming an account's credentials would tell who has an account.
  const options = await (await webauthn()).generateAuthenticationOptions({ rpID: rp.id, userVerification: 'preferred', timeout: CEREMONY_TIMEOUT_MS });
  await ctx.db.write((w) =>
    saveChallenge(w, loginBinding(attempt), {
      challenge: options.challenge,
      userRef: null,
      label: null,
      userHandle: null,
      expiresAt: ctx.clock.now() + CHALLENGE_TTL_MS,
    }),
  );
  return options;
}

export type PasskeyLogin = { outcome: 'ok'; user: User } | { outcome: 'refused' } | { outcome: 'throttled'; wait: number };

/**
 * Checks an assertion against the attempt's challenge. `gate` is asked, with the owner's account
 * when the credential is known, whether an attempt may be made at all (the log-in throttle) before
 * any signature is checked. An unknown credential, a wrong signature, a spent or foreign challenge,
 * a counter that did not move forward: all are the one outcome "refused".
 */
export async function finishPasskeyLogin(
  ctx: AppContext,
  rp: RelyingParty,
  attempt: string,
  response: AuthenticationResponseJSON,
  gate: (ownerRef: number | null) => Promise<number>,
): Promise<PasskeyLogin> {
  const now = ctx.clock.now();
  const challenge = await ctx.db.write((w) => takeChallenge(w, loginBinding(attempt), now));
  const passkey = await findPasskeyByCredentialId(ctx.db, response.id);
  const wait = await gate(passkey?.userRef ?? null);
  if (wait > 0) return { outcome: 'throttled', wait };
  if (!challenge || !passkey) return { outcome: 'refused' };
  const newCounter = await assertionCounter(rp, challenge.challenge, passkey, response);
  if (newCounter === null) return { outcome: 'refused' };
  // Two requests carrying one assertion can both get this far; only the first moves the counter.
  if (!(await ctx.db.write((w) => recordPasskeyUse(w, passkey.id, passkey.counter, newCounter, now)))) return { outcome: 'refused' };
  const user = await findUserByRef(ctx.db, passkey.userRef);
  if (!user) return { outcome: 'refused' };
  return { outcome: 'ok', user };
}

/** The authenticator's new signature counter when the assertion holds, else null. */
async function assertionCounter(rp: RelyingParty, challenge: string, passkey: Passkey, response: AuthenticationResponseJSON): Promise<number | null> {
  // The authenticator returns the handle it was given with this credential; another one means the
  // assertion was not made for this credential's registration.
  if (response.response.userHandle !== undefined && response.response.userHandle !== passkey.userHandle) return null;
  try {
    const result = await (await webauthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: passkey.credentialId, publicKey: passkey.publicKey, counter: passkey.counter, transports: passkey.transports },
      requireUserVerification: false,
    });
    return result.verified ? result.authenticationInfo.newCounter : null;
  } catch {
    // Among the library's refusals: a counter that did not move past the stored one (a clone).
    return null;
  }
}

/** Removes one of the account's own passkeys and mails the owner; false when it has no such passkey. */
export async function removePasskey(ctx: AppContext, user: User, id: number): Promise<boolean> {
  const now = ctx.clock.now();
  return ctx.db.write(async (tx) => {
    const removed = await deletePasskeyOfUser(tx, user.id, id);
    if (!removed) return false;
    await queueMail(tx, { to: user.email, ...changedMail(ctx, user, 'removed', removed.name) }, now);
    return true;
  });
}

function changedMail(ctx: AppContext, user: User, how: 'added' | 'removed', name: string) {
  return passkeyChangedMail(mailSite(ctx.config), {
    userId: user.user_id,
    how,
    name,
    accountUrl: `${ctx.config.baseUrl}/account/passkeys`,
    resetUrl: `${ctx.config.baseUrl}/forgot`,
  });
}
