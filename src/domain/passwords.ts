// SPEC §12: argon2id at or above OWASP's minimum (m=19 MiB, t=2, p=1); never truncated; guessable
// passwords refused (issue 14.9). The one place that decides whether a password may be used.
import argon2 from 'argon2';
import type { Argon2Cost } from '../config.js';
import { ZxcvbnFactory, type ZxcvbnResult } from '@zxcvbn-ts/core';
import * as zxcvbnCommon from '@zxcvbn-ts/language-common';
import * as zxcvbnEn from '@zxcvbn-ts/language-en';

export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
/** argon2's smallest parameters, for test suites alone (config.ts refuses them in production). */
const ARGON2_TEST_MINIMUM = { type: argon2.argon2id, memoryCost: 8, timeCost: 1, parallelism: 1 } as const;
const argon2Options = (cost: Argon2Cost) => (cost === 'test-minimum' ? ARGON2_TEST_MINIMUM : ARGON2_OPTIONS);
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX_BYTES = 1024;

export const PASSWORD_RECOMMENDED = 15;

/**
 * zxcvbn's score 3 means "safely unguessable": at least 10^8 guesses by its estimate. Below that,
 * a password falls to a guessing attack that knows the common lists, patterns and the user's own
 * names, whatever its length.
 */
export const PASSWORD_MIN_SCORE = 3;

/** What a password must not be built from: the account's own names. */
export interface PasswordContext {
  userId?: string | null | undefined;
  email?: string | null | undefined;
  /** Nickname, first and last name, when the account has them. */
  names?: readonly (string | null | undefined)[];
}

// Built on first use (about 0.1 s: it ranks the dictionaries). Levenshtein matching stays off: it
// costs about 250 ms a check on the event loop and catches little that the l33t and dictionary
// matchers do not.
let estimator: ZxcvbnFactory | undefined;
function zxcvbn(): ZxcvbnFactory {
  estimator ??= new ZxcvbnFactory({
    translations: zxcvbnEn.translations,
    graphs: zxcvbnCommon.adjacencyGraphs,
    dictionary: { ...zxcvbnCommon.dictionary, ...zxcvbnEn.dictionary },
  });
  return estimator;
}

/** The words a guesser targeting this account would try first: its names and their parts. */
export function contextWords(context: PasswordContext): string[] {
  const words = new Set<string>(['idsvc']);
  const add = (w: string | null | undefined) => {
    const v = w?.trim().toLowerCase();
    if (v && v.length >= 3) words.add(v);
  };
  add(context.userId);
  for (const part of context.userId?.split('_') ?? []) add(part);
  const email = context.email?.trim().toLowerCase();
  if (email) {
    add(email);
    const at = email.lastIndexOf('@');
    const local = at > 0 ? email.slice(0, at) : email;
    add(local);
    for (const part of local.split(/[._+-]+/)) add(part);
    // The domain's own labels ("example" of example.org), not the public suffix.
    for (const label of email.slice(at + 1).split('.').slice(0, -1)) add(label);
  }
  for (const name of context.names ?? []) {
    add(name);
    for (const part of name?.split(/\s+/) ?? []) add(part);
  }
  return [...words];
}

function feedbackText(result: ZxcvbnResult): string {
  const why = result.feedback.warning ?? 'It would be found quickly by guessing.';
  const how = result.feedback.suggestions.length > 0 ? result.feedback.suggestions.join(' ') : 'Add another word or two that are not common.';
  return `is too easy to guess. ${why} ${how}`;
}

/**
 * Why this password may not be used, as a phrase that follows "The password …", or null when it
 * may. Length is counted in characters (at least 8) and bytes (at most 1024), then the estimator
 * judges it against common passwords, words, names, keyboard patterns and the account's own names.
 */
export function passwordProblem(password: string, context: PasswordContext = {}): string | null {
  if ([...password].length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) return `must be at most ${PASSWORD_MAX_BYTES} bytes`;
  const result = zxcvbn().check(password, contextWords(context));
  return result.score < PASSWORD_MIN_SCORE ? feedbackText(result) : null;
}

export function hashPassword(password: string, cost: Argon2Cost): Promise<string> {
  return argon2.hash(password, argon2Options(cost));
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

// Hashing a throwaway password when the account does not exist makes "no such account" take as
// long as "wrong password", so timing tells nothing (SPEC §4.5). Always false: there is no account.
// The throwaway hash has the cost of the real ones, or the comparison would take another time.
const dummyHashes = new Map<Argon2Cost, Promise<string>>();
export async function burnPasswordCheck(password: string, cost: Argon2Cost): Promise<false> {
  let dummyHash = dummyHashes.get(cost);
  if (!dummyHash) {
    dummyHash = hashPassword('idsvc-dummy-password-for-timing', cost);
    dummyHashes.set(cost, dummyHash);
  }
  await verifyPassword(await dummyHash, password);
  return false;
}
