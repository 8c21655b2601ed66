// Whether partners may learn anything about a user beyond what each pushed itself (SPEC §3 rules 2
// and 7): one rule for answers, for events when they are written and for events when they are due.
// `users.opted_in` is the effective flag; a later condition (a proven e-mail address) folds into it.
import type { UserRow } from '../db/schema.js';

export const isVisible = <U extends Pick<UserRow, 'opted_in'>>(user: U | undefined): user is U => user !== undefined && user.opted_in === 1;
