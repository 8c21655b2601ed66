// The current password that a change of password or of address asks for.
import type { FastifyReply } from 'fastify';
import type { AppContext } from '../../../context.js';
import { verifyPassword } from '../../../domain/passwords.js';
import type { User } from '../../../repositories/users.js';

/** Wrong current passwords on the change forms, per account: a stolen session cannot guess for long. */
const PASSWORD_CHANGE_FAILURES = { limit: 5, windowSeconds: 15 * 60 };

/**
 * Checks the current password, throttled per account and purpose before any hashing: why it is
 * refused (with `Retry-After` set when throttled), or null. The caller resets the throttle once the
 * whole change is accepted.
 */
export async function currentPasswordRefusal(
  ctx: AppContext,
  reply: FastifyReply,
  user: User,
  given: string,
  throttleKey: string,
): Promise<{ message: string; status: number } | null> {
  const wait = await ctx.throttle.blockedFor(throttleKey, PASSWORD_CHANGE_FAILURES.limit);
  if (wait > 0) {
    reply.header('Retry-After', String(wait));
    return { message: `Too many wrong passwords. Try again in ${Math.ceil(wait / 60)} minutes.`, status: 429 };
  }
  if (!(await verifyPassword(user.password_hash, given))) {
    await ctx.throttle.recordFailure(throttleKey, PASSWORD_CHANGE_FAILURES.windowSeconds);
    return { message: 'Your current password is not right.', status: 400 };
  }
  return null;
}
