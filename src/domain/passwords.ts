// SPEC §12: argon2id at or above OWASP's minimum (m=19 MiB, t=2, p=1); never truncated; guessable
// passwords refused. The one place that decides whether a password may be used.
import argon2 from 'argon2';
import type { Worker } from 'node:worker_threads';
import type { Argon2Cost } from '../config.js';
import { spawnModuleWorker } from '../worker-module.js';
import type { StrengthAnswer, StrengthRequest } from './password-strength-worker.js';
import { PASSWORD_MAX_BYTES, PASSWORD_MIN, PASSWORD_MIN_SCORE } from './password-rules.js';

export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
/** argon2's smallest parameters, for test suites alone (config.ts refuses them in production). */
const ARGON2_TEST_MINIMUM = { type: argon2.argon2id, memoryCost: 8, timeCost: 1, parallelism: 1 } as const;
const argon2Options = (cost: Argon2Cost) => (cost === 'test-minimum' ? ARGON2_TEST_MINIMUM : ARGON2_OPTIONS);

/** What a password must not be built from: the account's own names. */
export interface PasswordContext {
  userId?: string | null | undefined;
  email?: string | null | undefined;
  /** Nickname, first and last name, when the account has them. */
  names?: readonly (string | null | undefined)[];
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
    for (const label of email
      .slice(at + 1)
      .split('.')
      .slice(0, -1))
      add(label);
  }
  for (const name of context.names ?? []) {
    add(name);
    for (const part of name?.split(/\s+/) ?? []) add(part);
  }
  return [...words];
}

type Judgement = Extract<StrengthAnswer, { ok: true }>;

// One thread judges every password, in turn: started on first use (so a process that judges none
// never builds the ranked dictionaries), and not holding the process open while nobody waits for it.
let strength: { worker: Worker; waiting: Map<number, (a: StrengthAnswer) => void> } | undefined;
let nextId = 1;

function strengthThread(): NonNullable<typeof strength> {
  if (strength) return strength;
  const worker = spawnModuleWorker(import.meta.url, 'password-strength-worker', null);
  const waiting = new Map<number, (a: StrengthAnswer) => void>();
  const current = { worker, waiting };
  worker.unref();
  worker.on('message', (a: StrengthAnswer) => {
    waiting.get(a.id)?.(a);
    waiting.delete(a.id);
    if (waiting.size === 0) worker.unref();
  });
  const fail = (message: string) => {
    if (strength === current) strength = undefined;
    for (const answer of waiting.values()) answer({ id: 0, ok: false, message });
    waiting.clear();
  };
  worker.on('error', (err) => fail(err.message));
  worker.on('exit', () => fail('the password-strength thread stopped'));
  strength = current;
  return current;
}

function judge(password: string, words: string[]): Promise<Judgement> {
  const { worker, waiting } = strengthThread();
  const id = nextId++;
  worker.ref(); // someone waits for the answer
  return new Promise((resolve, reject) => {
    waiting.set(id, (a) => (a.ok ? resolve(a) : reject(new Error(`password strength check failed: ${a.message}`))));
    worker.postMessage({ id, password, words } satisfies StrengthRequest);
  });
}

function feedbackText(result: Judgement): string {
  const why = result.warning ?? 'It would be found quickly by guessing.';
  const how = result.suggestions.length > 0 ? result.suggestions.join(' ') : 'Add another word or two that are not common.';
  return `is too easy to guess. ${why} ${how}`;
}

/**
 * Why this password may not be used, as a phrase that follows "The password …", or null when it
 * may. Length is counted in characters (at least 8) and bytes (at most 1024), then the estimator
 * judges its first PASSWORD_JUDGED_CHARS characters against common passwords, words, names,
 * keyboard patterns and the account's own names, in a thread of its own.
 */
export async function passwordProblem(password: string, context: PasswordContext = {}): Promise<string | null> {
  if ([...password].length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) return `must be at most ${PASSWORD_MAX_BYTES} bytes`;
  const result = await judge(password, contextWords(context));
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
