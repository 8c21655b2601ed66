// An identity's "Verify now" button: checks the profile page at once instead of on the next round.
import type { AppContext } from '../../../context.js';
import { ApiError } from '../../../domain/errors.js';
import { normaliseSvcId } from '../../../domain/svc-id.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { centralIdentityIdOf } from '../../../repositories/central-identities.js';
import { verifyIdentity } from '../../../verification/verify.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import { svcIdField } from './fields.js';

/** "Verify now" fetches a page chosen by the user: a few a minute is plenty for a person. */
const VERIFY_NOW_PER_MINUTE = 10;

export function registerIdentityVerify(app: TypedApp, ctx: AppContext): void {
  app.post('/account/identities/verify', { config: SITE, schema: formSchema({ svc_id: svcIdField }) }, async (request, reply) => {
    const user = request.user;
    const svcId = normaliseSvcId(request.body.svc_id);
    const identityId = await centralIdentityIdOf(ctx.db, user.id, svcId);
    if (identityId === undefined) throw new ApiError('not_found', 'You have no identity on that service.');
    const limit = await ctx.limiter.consume('site-verify', String(user.id), VERIFY_NOW_PER_MINUTE);
    if (!limit.allowed) throw new ApiError('rate_limited', `You have checked a lot just now. Try again in ${limit.resetSeconds} seconds.`, limit.resetSeconds);
    await verifyIdentity(ctx, identityId);
    return seeOther(reply, `/account?checked=${encodeURIComponent(svcId)}#identity-${encodeURIComponent(svcId)}`);
  });
}
