// The profile form: each field's value, and whether it is public.
import type { AppContext } from '../../../context.js';
import { PROFILE_FIELDS, PROFILE_MAX_LENGTH, type ProfileField } from '../../../domain/profile.js';
import type { TypedApp } from '../../../http/typed-app.js';
import type { ProfileValues } from '../../../repositories/users.js';
import { saveProfile } from '../../../services/accounts.js';
import { checkbox, formSchema, optionalText, seeOther, SITE } from '../../http.js';
import { accountPage } from './page.js';

export function registerProfile(app: TypedApp, ctx: AppContext): void {
  const profileProps = Object.fromEntries(
    PROFILE_FIELDS.flatMap(([f]) => [
      [f, optionalText(PROFILE_MAX_LENGTH[f])],
      [`public_${f}`, checkbox],
    ]),
  );
  app.post('/account/profile', { config: SITE, schema: formSchema(profileProps) }, async (request, reply) => {
    const user = request.user;
    const b = request.body;
    const values: ProfileValues = {};
    const pub: ProfileField[] = [];
    for (const [field] of PROFILE_FIELDS) {
      const v = (b[field] ?? '').replace(/\r\n/g, '\n');
      // Line breaks belong in a bio; no other control characters belong anywhere.
      if (/[\u0000-\u0008\u000B-\u001F\u007F\u2028\u2029]/.test(v) || (field !== 'bio' && /[\n\t]/.test(v))) {
        return accountPage(
          ctx,
          request,
          reply,
          user,
          { profileError: 'Profile fields cannot contain control characters or, except “About you”, line breaks.' },
          400,
        );
      }
      values[field] = v;
      if (b[`public_${field}`] === '1') pub.push(field);
    }
    await saveProfile(ctx, user, values, pub);
    return seeOther(reply, '/account/profile?msg=profile#profile');
  });
}
