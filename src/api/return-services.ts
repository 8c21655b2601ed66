// SPEC §4.1: the identities of a person, in the public view or the partner's private view.
import { apiOperation, formatOf } from '../http/api-route.js';
import { listAnswer } from '../http/api-schemas.js';
import { list, render } from '../http/document.js';
import { TaggedBody } from '../http/cache-headers.js';
import { cachedView } from './cached-views.js';
import { asksForPublicView, profileTypeOf, profileTypeQuery, requirePrivateAccess, userIdentifierOf, userServiceFieldsFor, userServicesXml } from './shared.js';

export const returnServices = apiOperation({
  operationId: 'return_services',
  summary: 'The services a person has an identity on',
  description:
    "`public`: the central repository of an opted-in user (api_key alone; `usrSvcId` only with proof: the api_token, for a trusted partner, a pro user or the partner's own contributions). `private` (default): the partner's own repository, merged with the central one when the user linked it (needs the api_token). Unknown and opted-out users answer `not_found` alike. Entries are sorted by svcName.",
  paths: ['/api/return_services/:api_key/:user_identifier', '/api/return_services/:api_key/:user_identifier/:profile_type'],
  query: profileTypeQuery,
  tokenRequired: false,
  cache: asksForPublicView,
  answer: listAnswer('services', 'UserService'),
  example: { params: { api_key: '$API_KEY', user_identifier: 'alice' }, body: { api_token: '$API_TOKEN' } },
  handler(call) {
    const id = userIdentifierOf(call);
    const view =
      profileTypeOf(call) === 'public' ? { view: 'public' as const, reader: call.reader } : { view: 'private' as const, access: requirePrivateAccess(call) };
    const format = formatOf(call.request);
    // Kept rendered, in the format asked for, with its ETag once one is sent: the body is what a repeated read costs.
    const rendered = cachedView(
      call.ctx,
      `return_services.${format}`,
      id,
      view,
      // Only JSON answers show how a mark was earned (docs/spec.md, "Evidence of verification").
      format === 'json' ? 'with-evidence' : 'without-evidence',
      (entries, kept) =>
        new TaggedBody(
          format === 'xml' ? userServicesXml(entries) : render({ root: 'services', list: list('service', entries.map(userServiceFieldsFor(format))) }, format),
          kept,
        ),
    );
    // An answer from memory is sent at once, without a promise (http/api-route.ts).
    return rendered instanceof Promise ? rendered.then((body) => ({ root: 'services', rendered: body })) : { root: 'services', rendered };
  },
});
