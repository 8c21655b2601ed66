import type { CheckOutcome, VerificationMethod } from '../../verification/methods.js';

export type AttemptOutcome = CheckOutcome['result'];

export const OUTCOME_TEXT: Record<AttemptOutcome, string> = {
  verified: 'Verified',
  absent: 'Proof not found',
  transient: 'Could not check',
};

/** How each method is named to people (docs/verification.md says the same at length). */
export const METHOD_TEXT: Record<VerificationMethod, string> = {
  'rel-me': 'a rel="me" link back to your profile',
  proof: 'your proof text on the service',
  dns: 'a DNS TXT record on your domain',
  atproto: 'your Bluesky handle and its DID document',
  oauth: 'connecting your account through its sign-in provider',
  operator: 'the operator of this site',
};

/** The same, told to visitors of the public profile. */
export const PUBLIC_METHOD_TEXT: Record<VerificationMethod, string> = {
  'rel-me': 'a rel="me" link back to this page',
  proof: 'a proof text on the service naming this page',
  dns: 'a DNS TXT record on the domain naming this page',
  atproto: 'the Bluesky handle, its DID document and its profile naming this page',
  oauth: 'signing in to the account through its provider',
  operator: 'the operator of this site',
};
