// SPEC §4.3: add, replace or remove one identity in the partner's repository (and, when linked,
// in the central repository).
import { Type } from '@sinclair/typebox';
import type { ApiOperation } from '../http/api-route.js';
import { objectAnswer } from '../http/api-schemas.js';
import { pushIdentity, validateUsrSvcId } from '../services/partner-data.js';
import { serviceOf, userIdentifierOf } from './shared.js';

export const updateService: ApiOperation = {
  operationId: 'update_service',
  summary: 'Set or remove a person\'s identifier on one service',
  description:
    'A blank or absent `usrSvcId` removes the entry (a no-op when there is none). `usrSvcId` may be given in the body for identifiers that cannot sit in a path segment; the body wins. Idempotent.',
  paths: ['/api/update_service/:api_key/:user_identifier/:svcId', '/api/update_service/:api_key/:user_identifier/:svcId/:usrSvcId'],
  body: { usrSvcId: Type.Optional(Type.String({ maxLength: 1024, description: 'The identifier on the service; blank removes.' })) },
  tokenRequired: true,
  answer: objectAnswer('service', 'PushedService'),
  example: { params: { api_key: '$API_KEY', user_identifier: 'alice', svcId: 'github' }, body: { api_token: '$API_TOKEN', usrSvcId: 'alice-codes' } },
  async handler(call) {
    const id = userIdentifierOf(call);
    const svc = await serviceOf(call.ctx, call.params.svcId);
    const usrSvcId = validateUsrSvcId(call.body.usrSvcId ?? call.params.usrSvcId);
    await pushIdentity(call.ctx, call.partner, id, svc, usrSvcId);
    return { root: 'service', fields: { svcId: svc.svcId, usrSvcId } };
  },
};
