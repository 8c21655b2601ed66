// SPEC §4.8: who claims this identity (opted-in, discoverable users), verified claims first.
import { apiOperation } from '../http/api-route.js';
import { listAnswer } from '../http/api-schemas.js';
import { list } from '../http/document.js';
import { claimantsOf } from '../repositories/central-identities.js';
import { normaliseUsrSvcId } from '../services/central.js';
import { profileUrl, serviceOf } from './shared.js';
import { errors } from '../domain/errors.js';

export const reverseLookup = apiOperation({
  operationId: 'reverse_lookup',
  summary: 'Which users claim an identity on a service',
  description:
    'Case-insensitive; one leading `@` is ignored. Only opted-in users who chose to be discoverable (a consent of its own, off until the user turns it on); verified claims first.',
  paths: ['/api/reverse_lookup/:api_key/:svcId/:usrSvcId'],
  tokenRequired: false,
  answer: listAnswer('users', 'ClaimingUser'),
  example: { params: { api_key: '$API_KEY', svcId: 'github', usrSvcId: 'alice-codes' } },
  async handler(call) {
    const svc = await serviceOf(call.ctx, call.params.svcId);
    const norm = normaliseUsrSvcId(call.params.usrSvcId ?? '');
    if (norm === '') throw errors.invalidRequest('usrSvcId is missing');
    const rows = await claimantsOf(call.ctx.db, svc.svcId, norm, 100);
    return {
      root: 'users',
      list: list(
        'user',
        rows.map((r) => ({ userId: r.user_id, url: profileUrl(call.ctx, r.user_id), verified: r.verified })),
      ),
    };
  },
});
