// SPEC §2: the four shapes of a user_identifier, all naming one person.
import { hash } from 'node:crypto';
import { errors } from './errors.js';

export type ParsedIdentifier =
  | { kind: 'md5'; md5: string }
  | { kind: 'sha256'; sha256: string }
  | { kind: 'email'; md5: string; sha256: string; email: string }
  | { kind: 'userId'; userId: string };

export const USER_ID_PATTERN = /^[a-z0-9_]{3,30}$/;

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

// One-shot digests: no Hash object per call.
export function md5Hex(s: string): string {
  return hash('md5', s, 'hex');
}

export function sha256Hex(s: string): string {
  return hash('sha256', s, 'hex');
}

export function emailHashes(email: string): { email: string; md5: string; sha256: string } {
  const e = normaliseEmail(email);
  return { email: e, md5: md5Hex(e), sha256: sha256Hex(e) };
}

// A deliberately loose check: the point is to tell an address from the other shapes, not to
// police what mail servers accept.
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+$/;

export function isValidEmail(email: string): boolean {
  const e = normaliseEmail(email);
  return e.length <= 254 && EMAIL_SHAPE.test(e) && /\.[^.@]+$/.test(e.split('@')[1] ?? '');
}

export function isValidUserId(userId: string): boolean {
  return USER_ID_PATTERN.test(userId) && !/^[0-9a-f]{32}$/.test(userId) && !/^[0-9a-f]{64}$/.test(userId);
}

export function parseUserIdentifier(raw: string): ParsedIdentifier {
  const trimmed = raw.trim();
  if (/^[0-9a-fA-F]{32}$/.test(trimmed)) return { kind: 'md5', md5: trimmed.toLowerCase() };
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return { kind: 'sha256', sha256: trimmed.toLowerCase() };
  if (trimmed.includes('@')) {
    // The message never repeats the address: raw e-mail addresses stay out of answers and logs.
    if (!EMAIL_SHAPE.test(trimmed)) throw errors.invalidRequest('user_identifier is not a valid e-mail address, MD5, SHA-256 or userId');
    return { kind: 'email', ...emailHashes(trimmed) };
  }
  if (USER_ID_PATTERN.test(trimmed)) return { kind: 'userId', userId: trimmed };
  throw errors.invalidRequest('user_identifier must be an MD5 or SHA-256 hex digest of an e-mail address, an e-mail address, or a userId ([a-z0-9_]{3,30})');
}
