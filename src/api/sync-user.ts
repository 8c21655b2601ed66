// SPEC §4.5: link the partner's repository for a person to the account whose credentials they gave.
import { isIP } from 'node:net';
import { Type } from '@sinclair/typebox';
import { errors } from '../domain/errors.js';
import { apiOperation } from '../http/api-route.js';
import { textAnswer } from '../http/api-schemas.js';
import { checkCredentials, linkUser } from '../services/links.js';
import { userIdentifierOf } from './shared.js';
import { isProvenAccount } from '../domain/visibility.js';

export const credentialFields = {
  email_address: Type.String({ maxLength: 254, description: "E-mail address of the user's account on the service." }),
  password: Type.String({ maxLength: 4096, description: 'Password of that account.' }),
  end_user_ip: Type.Optional(Type.String({ maxLength: 64, description: "Address of the person at the partner's site, for throttling." })),
};

export function clientAddress(endUserIp: string | undefined, callerIp: string): string {
  if (endUserIp === undefined || endUserIp === '') return callerIp;
  if (isIP(endUserIp.trim()) === 0) throw errors.invalidRequest('end_user_ip must be an IPv4 or IPv6 address');
  return endUserIp.trim().toLowerCase();
}

export const syncUser = apiOperation({
  operationId: 'sync_user',
  summary: "Link the partner's repository for a person to their account",
  description:
    "The person's e-mail address and password (collected by the widget's sync form) prove the account. On linking, the partner's entries fill services the central repository lacks; later pushes flow to it. An unknown address and a wrong password give the same answer. Failures are throttled, before any hashing, per account + partner + end-user address (5), per partner + end-user address (20), and per account from everywhere (a ceiling of 50), each per 15 minutes by default: strangers elsewhere cannot stop the owner syncing from her own address and partner. The right password for an account whose e-mail address is not confirmed yet answers `forbidden`, with a message saying to confirm the address first.",
  paths: ['/api/sync_user/:api_key/:user_identifier'],
  body: credentialFields,
  tokenRequired: true,
  answer: textAnswer('result', Type.Literal('true')),
  example: {
    params: { api_key: '$API_KEY', user_identifier: 'alice' },
    body: { api_token: '$API_TOKEN', email_address: 'alice@example.org', password: '$PASSWORD' },
  },
  async handler(call) {
    const id = userIdentifierOf(call);
    const email = call.body.email_address ?? '';
    const password = call.body.password ?? '';
    const user = await checkCredentials(call.ctx, call.partner, { email, password, clientAddress: clientAddress(call.body.end_user_ip, call.ip) });
    // Only after the password: a wrong one answers as for an unknown address, whatever the account.
    if (!isProvenAccount(user)) throw errors.addressNotConfirmed();
    await linkUser(call.ctx, call.partner, id, call.params.user_identifier ?? '', user);
    return { root: 'result', text: 'true' };
  },
});
