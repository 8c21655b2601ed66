// SPEC §4.9: which of a linked user's contacts are opted-in, discoverable users, with their public
// identities. The link is the user's consent to have their address book matched.
import { Type } from '@sinclair/typebox';
import { errors } from '../domain/errors.js';
import { parseUserIdentifier, type ParsedIdentifier } from '../domain/identifiers.js';
import { apiOperation, formatOf } from '../http/api-route.js';
import { listAnswer } from '../http/api-schemas.js';
import { list, type Fields } from '../http/document.js';
import { findLink } from '../repositories/links.js';
import { findUserByIdentifier, lookupPerson } from '../repositories/people.js';
import { accountRefById } from '../repositories/users.js';
import { bySvcName, centralEntries, isVisible } from '../services/partner-data.js';
import { userIdentifierOf, userServiceFieldsFor } from './shared.js';

export const MAX_CONTACTS = 1000;

function parseContacts(raw: string | undefined): { given: string; id: ParsedIdentifier }[] {
  const items = (raw ?? '')
    .split(/[,\n\r]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw errors.invalidRequest('contacts is missing: send up to 1000 user_identifiers separated by commas or newlines');
  if (items.length > MAX_CONTACTS) throw errors.invalidRequest(`contacts holds ${items.length} entries; at most ${MAX_CONTACTS}`);
  const out: { given: string; id: ParsedIdentifier }[] = [];
  for (const given of items) {
    try {
      out.push({ given, id: parseUserIdentifier(given) });
    } catch {
      // An address book holds all sorts of strings; one that names nobody simply matches nobody.
    }
  }
  return out;
}

export const returnContacts = apiOperation({
  operationId: 'return_contacts',
  summary: "Match a linked user's contacts against the service",
  description:
    'The user must have linked this partner. `contacts`: up to 1000 user_identifiers separated by commas or newlines. Answers each contact that is an opted-in user who chose to be discoverable (off until the user turns it on), with the public view of their identities. Entries that are not a valid identifier match nobody.',
  paths: ['/api/return_contacts/:api_key/:user_identifier'],
  body: { contacts: Type.Optional(Type.String({ maxLength: 65536 })) },
  tokenRequired: true,
  answer: listAnswer('contacts', 'Contact'),
  example: { params: { api_key: '$API_KEY', user_identifier: 'alice' }, body: { api_token: '$API_TOKEN', contacts: 'bob@example.org,carol@example.org' } },
  async handler(call) {
    const q = call.ctx.db;
    const person = await lookupPerson(q, userIdentifierOf(call));
    const link = await findLink(q, call.partner.id, person);
    const owner = link ? (person.user?.id === link.user_ref ? person.user : await accountRefById(q, link.user_ref)) : undefined;
    if (!link || !isVisible(owner)) throw errors.forbidden('The user has not linked their account with this partner');
    const contacts = parseContacts(call.body.contacts);
    const snap = await call.ctx.catalogue.get();
    const fields = userServiceFieldsFor(formatOf(call.request));
    const found: Fields[] = [];
    const seen = new Set<number>();
    for (const c of contacts) {
      const user = await findUserByIdentifier(q, c.id);
      if (!isVisible(user) || !user.discoverable || user.id === owner.id || seen.has(user.id)) continue;
      seen.add(user.id);
      const entries = (await centralEntries(q, snap, user, call.reader)).sort(bySvcName);
      found.push({ identifier: c.given, userId: user.user_id, services: list('service', entries.map(fields)) });
    }
    return { root: 'contacts', list: list('contact', found) };
  },
});
