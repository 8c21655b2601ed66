import type { RelMeOutcome } from '../../verification/relme.js';

export const OUTCOME_TEXT: Record<RelMeOutcome, string> = {
  verified: 'Verified',
  unreachable: 'Could not reach the page',
  no_link: 'No link back found',
  link_elsewhere: 'The link points somewhere else',
};
