// SPEC §4.3: add, replace or remove one identity in the partner's repository (and, when linked,
// in the central repository). A profile URL in the body may stand for svcId + usrSvcId.
import { Type } from '@sinclair/typebox';
import { errors } from '../domain/errors.js';
import { apiOperation, type ApiCall } from '../http/api-route.js';
import { objectAnswer } from '../http/api-schemas.js';
import { pushIdentity, validateUsrSvcId } from '../services/partner-data.js';
import { recogniseProfileUrl } from '../services/profile-urls.js';
import { serviceOf, userIdentifierOf } from './shared.js';

const pushFields = {
  usrSvcId: Type.Optional(Type.String({ maxLength: 1024, description: 'The identifier on the service; blank removes.' })),
  url: Type.Optional(
    Type.String({ maxLength: 2048, description: 'A profile URL, in place of the svcId path segment (and usrSvcId); only on the path without svcId.' }),
  ),
};

async function targetOf(call: ApiCall<typeof pushFields>) {
  const url = call.body.url;
  if (call.params.svcId !== undefined) {
    if (url !== undefined) throw errors.invalidRequest('Give either svcId in the path or url in the body, not both');
    return { svc: await serviceOf(call.ctx, call.params.svcId), usrSvcId: validateUsrSvcId(call.body.usrSvcId ?? call.params.usrSvcId) };
  }
  if (url === undefined || url.trim() === '') throw errors.invalidRequest('svcId is missing: put it in the path, or send a profile url in the body');
  if (call.body.usrSvcId !== undefined) throw errors.invalidRequest('With url, leave out usrSvcId: the url names it');
  const found = await recogniseProfileUrl(call.ctx, url);
  if (found.kind === 'ambiguous') {
    throw errors.invalidRequest(`url fits several services (${found.candidates.map((c) => c.svcId).join(', ')}): give the svcId in the path`);
  }
  if (found.kind === 'none') throw errors.serviceNotFound();
  return { svc: found.svc, usrSvcId: validateUsrSvcId(found.usrSvcId) };
}

export const updateService = apiOperation({
  operationId: 'update_service',
  summary: "Set or remove a person's identifier on one service",
  description:
    'A blank or absent `usrSvcId` removes the entry (a no-op when there is none). `usrSvcId` may be given in the body for identifiers that cannot sit in a path segment; the body wins. Instead of `svcId` in the path, a `url` in the body (a profile URL such as `https://github.com/alice`) names the service and the identifier; a URL that fits no service is `not_found`, one that fits several is `invalid_request`. Idempotent.',
  paths: [
    '/api/update_service/:api_key/:user_identifier/:svcId',
    '/api/update_service/:api_key/:user_identifier/:svcId/:usrSvcId',
    '/api/update_service/:api_key/:user_identifier',
  ],
  body: pushFields,
  tokenRequired: true,
  answer: objectAnswer('service', 'PushedService'),
  // The url form names the service differently, so it is listed beside the svcId form.
  documented: {
    paths: ['/api/update_service/:api_key/:user_identifier/:svcId', '/api/update_service/:api_key/:user_identifier'],
    summaries: ["Set or remove a person's identifier on one service", "Set a person's identifier from a profile URL"],
    bodies: [
      { api_token: '$API_TOKEN', usrSvcId: 'alice-codes' },
      { api_token: '$API_TOKEN', url: 'https://github.com/alice-codes' },
    ],
  },
  example: { params: { api_key: '$API_KEY', user_identifier: 'alice', svcId: 'github' }, body: { api_token: '$API_TOKEN', usrSvcId: 'alice-codes' } },
  async handler(call) {
    const id = userIdentifierOf(call);
    const { svc, usrSvcId } = await targetOf(call);
    await pushIdentity(call.ctx, call.partner, id, svc, usrSvcId);
    return { root: 'service', fields: { svcId: svc.svcId, usrSvcId } };
  },
});
