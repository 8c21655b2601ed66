// Whether partners may learn anything about a user beyond what each pushed itself (SPEC §3 rules 2
// and 7): one rule for answers, for events when they are written and for events when they are due.
// `users.opted_in` is the effective flag; a later condition (a proven e-mail address) folds into it.

export const isVisible = <U extends { opted_in: boolean }>(user: U | undefined): user is U => user?.opted_in === true;
