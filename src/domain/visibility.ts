// Whether partners may learn anything about a user beyond what each pushed itself (SPEC §3 rules 2
// and 7): one rule for answers, for events when they are written and for events when they are due.
// `users.opted_in` is the effective flag; a later condition (a proven e-mail address) folds into it.

export const isVisible = <U extends { opted_in: boolean }>(user: U | undefined): user is U => user?.opted_in === true;

/**
 * An account names a person only once its e-mail address is proven: until then its hashes and its
 * userId answer as an unknown person's, and nothing said about the address attaches to whoever typed
 * it in. The one statement of that rule: `isProvenAccount` for a row in hand, `provenAccountSql` for
 * SQL written by hand (`alias` the users table's alias, if any); Kysely queries use
 * `whereProvenAccount` in src/repositories/users.ts, which is this same condition.
 */
export const isProvenAccount = (user: { email_proven_at: number | null }): boolean => user.email_proven_at !== null;

export const provenAccountSql = (alias?: string): string => `${alias ? `${alias}.` : ''}email_proven_at IS NOT NULL`;
