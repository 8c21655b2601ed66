// SPEC §4.7: an opted-in user's profile: userId and url always, then the filled-in fields the user
// made public, or (private view, linked partner) all filled-in fields.
import { errors } from '../domain/errors.js';
import { profileFields } from '../domain/profile.js';
import { apiOperation } from '../http/api-route.js';
import { objectAnswer } from '../http/api-schemas.js';
import type { Fields } from '../http/document.js';
import { findLink } from '../repositories/links.js';
import { lookupPerson } from '../repositories/people.js';
import { findUserByRef } from '../repositories/users.js';
import { isVisible } from '../services/partner-data.js';
import { asksForPublicView, profileTypeOf, profileTypeQuery, profileUrl, requirePrivateAccess, userIdentifierOf } from './shared.js';

export const returnProfile = apiOperation({
  operationId: 'return_profile',
  summary: "A user's profile",
  description:
    'Opted-in users only. `userId` and `url` (the public profile page) always; each other field only when filled in and public, or — private view — when the user linked this partner.',
  paths: ['/api/return_profile/:api_key/:user_identifier', '/api/return_profile/:api_key/:user_identifier/:profile_type'],
  query: profileTypeQuery,
  tokenRequired: false,
  cache: asksForPublicView,
  answer: objectAnswer('profile', 'Profile'),
  example: { params: { api_key: '$API_KEY', user_identifier: 'alice' }, query: { profile_type: 'public' } },
  async handler(call) {
    const id = userIdentifierOf(call);
    const type = profileTypeOf(call);
    if (type === 'private') requirePrivateAccess(call);
    // The public profile may come from a read replica slightly behind; the private one is read
    // from the database itself, so a partner reads what it was just granted.
    const q = type === 'private' ? call.ctx.db : call.ctx.db.behind();
    const person = await lookupPerson(q, id);
    if (!isVisible(person.user)) throw errors.userNotFound();
    const user = await findUserByRef(q, person.user.id);
    if (!user) throw errors.userNotFound(); // deleted since
    const linked = type === 'private' && (await findLink(q, call.partner.id, person))?.user_ref === user.id;
    const fields: Record<string, string> = { userId: user.user_id, url: profileUrl(call.ctx, user.user_id), ...profileFields(user, linked ? 'all' : 'public') };
    return { root: 'profile', fields: fields as Fields };
  },
});
