// The ways an identity can be proven, behind one interface, so that verify.ts (which records the
// outcome, keeps the evidence and tells partners) never knows how a method works. A method answers
// one of three things, and only a definite answer may change a mark: `absent` is "we looked where
// the proof must be and it is not there", `transient` is "we could not look" (timeout, 5xx, 429, DNS
// failure) and never removes a mark.
import type { AppContext } from '../context.js';
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import type { Fetcher } from './polite-fetch.js';

/**
 * How a mark was earned. `operator` is set by hand (CLI), never by a checker; `oauth` by connecting
 * the account through its provider (connections/), and kept by the daily re-check of that account.
 */
export type VerificationMethod = 'rel-me' | 'proof' | 'dns' | 'atproto' | 'oauth' | 'operator';

export const VERIFICATION_METHODS: readonly VerificationMethod[] = ['rel-me', 'proof', 'dns', 'atproto', 'oauth', 'operator'];

/** The identity a checker is asked about, with what it needs to name its owner. */
export interface CheckSubject {
  identityId: number;
  userRef: number;
  /** The account's public user id (as in `/u/<userId>`). */
  userId: string;
  svc: CatalogueEntry;
  usrSvcId: string;
  /** The account's public profile page on this idsvc, `${BASE_URL}/u/<userId>`. */
  profilePageUrl: string;
  /** A URL the person gave for this identity's proof (a gist, a post), when the method needs one. */
  proofUrl: string | null;
  /**
   * The fetcher a check sends every HTTP request through (polite-fetch.ts: safeFetch behind a
   * per-host budget and Retry-After, with idsvc's user agent). Set by verify.ts; a checker falls
   * back to safeFetch without it.
   */
  fetch?: Fetcher;
}

interface OutcomeBase {
  method: Exclude<VerificationMethod, 'operator'>;
  /** What was fetched or resolved: a URL, or `dns:TXT:<name>`; null when nothing could be asked. */
  evidenceUrl: string | null;
  /** One sentence for the person: what was looked for, where, and what was found. Names no secret. */
  detail: string;
  /** The HTTP status of the answer read, when there was one. */
  status?: number;
  /**
   * The identifier the account now has, when the service says the account the mark is about was
   * renamed (the `oauth` method resolves a stable account id): the entry follows it.
   */
  renamedTo?: string;
}

export type CheckOutcome =
  | (OutcomeBase & { result: 'verified' })
  /** A definite negative: the answer was read and the proof is not where it must be. */
  | (OutcomeBase & { result: 'absent' })
  /** Could not look: the service is down, slow, rate-limiting or unreachable. Never removes a mark. */
  | (OutcomeBase & { result: 'transient'; retryAfterMs?: number });

export interface VerificationChecker {
  method: Exclude<VerificationMethod, 'operator'>;
  /** Whether this method can say anything about an identity on this service. */
  appliesTo(svc: CatalogueEntry, usrSvcId: string): boolean;
  /**
   * Whether a person can count on this method for the service (what coverage reports); without it,
   * wherever the method applies. A method may try where it is not known to work.
   */
  dependable?(svc: CatalogueEntry): boolean;
  /**
   * Whether the method has anything to say about this person's entry; without it, always. The
   * `oauth` method asks only about entries the person connected an account for.
   */
  concerns?(ctx: AppContext, subject: CheckSubject): Promise<boolean>;
  check(ctx: AppContext, subject: CheckSubject): Promise<CheckOutcome>;
}
