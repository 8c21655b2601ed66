// Signed widget URLs (SPEC §7): `?exp={unix seconds}&sig={hex HMAC-SHA256}` over
// "{api_key}:{user_identifier}:{exp}". The server keeps only the SHA-256 of an api_token (SPEC §2),
// so the HMAC key is that digest: the 64 lowercase hex characters of sha256(api_token), as ASCII.
// The partner's server derives it from its token (the client library's signWidget does); the
// service reads it from the partner row. A rotated-out token keeps signing for its grace period.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Partner } from '../repositories/partners.js';

export type SignatureCheck = { status: 'unsigned' } | { status: 'valid' } | { status: 'invalid'; warning: string };

const FALLBACK = 'showing the public view';

/**
 * The furthest ahead an `exp` may be. A signed URL is a bearer pass to a person's
 * private view for whoever holds it (a log, a shared screenshot, a browser history): a day at most
 * bounds how long a leaked URL stays useful, while a page that embeds it still renders for its
 * visitor. Partners sign per page view with minutes to spare (docs/widget.md).
 */
export const MAX_SIGNATURE_LIFETIME_SECONDS = 24 * 3600;
const EXP = /^\d{1,12}$/;
const SIG = /^[0-9a-f]{64}$/;

export function widgetSignature(keyHex: string, apiKey: string, userIdentifier: string, exp: string): string {
  return createHmac('sha256', keyHex).update(`${apiKey}:${userIdentifier}:${exp}`).digest('hex');
}

/** The signing keys that count now: the current token's, and the previous one's within its grace. */
function signingKeys(partner: Partner, nowMs: number): string[] {
  const keys = [partner.token_hash];
  const previous = partner.previous_token_hash;
  if (previous !== null && partner.previous_token_expires_at !== null && nowMs < partner.previous_token_expires_at) keys.push(previous);
  return keys;
}

/**
 * `userIdentifier` is the path segment exactly as the browser sent it (decoded, not normalised): a
 * signature covers one spelling of one person for one partner.
 */
export function checkWidgetSignature(partner: Partner, userIdentifier: string, exp: unknown, sig: unknown, nowMs: number): SignatureCheck {
  if (exp === undefined && sig === undefined) return { status: 'unsigned' };
  if (exp === undefined || sig === undefined) return { status: 'invalid', warning: `a signed URL needs both exp and sig; ${FALLBACK}` };
  // Checked before the query's schema: a field given twice arrives as an array (its 400 follows).
  if (typeof exp !== 'string' || typeof sig !== 'string') return { status: 'invalid', warning: `exp and sig must each be given once; ${FALLBACK}` };
  const given = sig.trim().toLowerCase();
  if (!EXP.test(exp) || !SIG.test(given)) return { status: 'invalid', warning: `malformed exp or sig; ${FALLBACK}` };
  const givenBytes = Buffer.from(given, 'hex');
  const matches = signingKeys(partner, nowMs).some((key) =>
    timingSafeEqual(Buffer.from(widgetSignature(key, partner.api_key, userIdentifier, exp), 'hex'), givenBytes),
  );
  if (!matches) return { status: 'invalid', warning: `invalid signature (not made with this partner's api_token for this user_identifier); ${FALLBACK}` };
  // Checked after the HMAC, so only the partner learns from the warning that its URL is merely old
  // (or signed for too long).
  if (Number(exp) * 1000 <= nowMs) return { status: 'invalid', warning: `the signed URL has expired; ${FALLBACK}` };
  if (Number(exp) * 1000 > nowMs + MAX_SIGNATURE_LIFETIME_SECONDS * 1000) {
    return {
      status: 'invalid',
      warning: `exp is more than ${MAX_SIGNATURE_LIFETIME_SECONDS / 3600} hours ahead (signed URLs live at most a day); ${FALLBACK}`,
    };
  }
  return { status: 'valid' };
}
