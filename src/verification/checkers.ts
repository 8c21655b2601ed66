// Every method a check runs, in the order their outcomes are reported. verify.ts asks each one
// that applies to the identity's service; the first `verified` answer earns the mark.
import { atprotoChecker } from './atproto-checker.js';
import { dnsChecker } from './dns-checker.js';
import type { VerificationChecker } from './methods.js';
import { oauthChecker } from './oauth-checker.js';
import { proofChecker } from './proof-checker.js';
import { relMeChecker } from './relme-checker.js';

// `oauth` first: a connected account answers from one API call, before any page is read.
export const CHECKERS: readonly VerificationChecker[] = [oauthChecker, relMeChecker, proofChecker, dnsChecker, atprotoChecker];
