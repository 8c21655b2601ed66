// SPEC §4.6: end a link. Also answers the seed's POST on the widget path without a third segment.
import { Type } from '@sinclair/typebox';
import { apiOperation } from '../http/api-route.js';
import { textAnswer } from '../http/api-schemas.js';
import { unlinkUser } from '../services/links.js';
import { userIdentifierOf } from './shared.js';
import { clientAddress } from './sync-user.js';
import { errors } from '../domain/errors.js';

export const unsyncUser = apiOperation({
  operationId: 'unsync_user',
  summary: "End the link between the partner's repository and a user's account",
  description:
    "Answers the unlinked user's userId. `email_address` and `password` are optional; when given they must match the linked account. What already flowed to the central repository stays there.",
  paths: ['/api/unsync_user/:api_key/:user_identifier', '/api/service_collection_widget/:api_key/:user_identifier'],
  postOnlyPaths: ['/api/service_collection_widget/:api_key/:user_identifier'],
  body: {
    email_address: Type.Optional(Type.String({ maxLength: 254 })),
    password: Type.Optional(Type.String({ maxLength: 4096 })),
    end_user_ip: Type.Optional(Type.String({ maxLength: 64 })),
  },
  tokenRequired: true,
  answer: textAnswer('user_identifier', Type.String({ description: 'The userId of the account that was unlinked.' })),
  example: { params: { api_key: '$API_KEY', user_identifier: 'alice' }, body: { api_token: '$API_TOKEN' } },
  async handler(call) {
    const id = userIdentifierOf(call);
    const { email_address: email, password } = call.body;
    if ((email === undefined) !== (password === undefined)) throw errors.invalidRequest('send both email_address and password, or neither');
    const creds = email !== undefined && password !== undefined ? { email, password, clientAddress: clientAddress(call.body.end_user_ip, call.ip) } : null;
    const user = await unlinkUser(call.ctx, call.partner, id, creds);
    return { root: 'user_identifier', text: user.user_id };
  },
});
