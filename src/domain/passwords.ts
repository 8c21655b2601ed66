// SPEC §12: argon2id at or above OWASP's minimum (m=19 MiB, t=2, p=1); never truncated.
import argon2 from 'argon2';
import { dictionary } from '@zxcvbn-ts/language-common';

export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX_BYTES = 1024;

export const PASSWORD_RECOMMENDED = 15;

// zxcvbn-ts's list of the ~49,000 most common passwords from public breach corpora. Built on first
// use; compared lower-cased, so "Password1" is refused like "password1".
let common: Set<string> | undefined;
export function isCommonPassword(password: string): boolean {
  common ??= new Set(dictionary['passwords-common'].map((p) => p.toLowerCase()));
  return common.has(password.toLowerCase());
}

export function passwordProblem(password: string): string | null {
  if ([...password].length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) return `must be at most ${PASSWORD_MAX_BYTES} bytes`;
  if (isCommonPassword(password)) return 'is one of the most commonly used passwords; choose another';
  return null;
}

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

// Hashing a throwaway password when the account does not exist makes "no such account" take as
// long as "wrong password", so timing tells nothing (SPEC §4.5).
let dummyHash: Promise<string> | undefined;
export async function burnPasswordCheck(password: string): Promise<void> {
  dummyHash ??= hashPassword('idsvc-dummy-password-for-timing');
  await verifyPassword(await dummyHash, password);
}
