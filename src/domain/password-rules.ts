// The numbers of the password rule (SPEC §12, docs/spec.md "Passwords"), shared by the event loop
// (passwords.ts) and the thread that judges strength (password-strength-worker.ts).
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX_BYTES = 1024;
export const PASSWORD_RECOMMENDED = 15;

/**
 * zxcvbn's score 3 means "safely unguessable": at least 10^8 guesses by its estimate. Below that,
 * a password falls to a guessing attack that knows the common lists, patterns and the user's own
 * names, whatever its length.
 */
export const PASSWORD_MIN_SCORE = 3;

/**
 * The estimator judges the first this many characters. Guessing the whole takes at least as long
 * as guessing its beginning, so a strong beginning is enough; a weak one is refused even when more
 * follows. Bounded because the estimator's cost grows with the square of what it reads.
 */
export const PASSWORD_JUDGED_CHARS = 32;

/** How many l33t readings of the password ("p4$$w0rd" as "password") the estimator tries at most. */
export const PASSWORD_L33T_VARIANTS = 2;
