// The application for partner keys (GET shows the form, POST sends it). Only a proven address may
// apply: the operators answer by mail, and the partner's first member is this account.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { isProvenAccount } from '../../../domain/visibility.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { ApplicationError, apply } from '../../../services/partner-applications.js';
import { DashboardError, parseOrigins } from '../../../services/partner-dashboard.js';
import { formSchema, sendPage, seeOther, SITE } from '../../http.js';
import { csrfToken } from '../../session.js';
import { ApplyPage, type ApplyForm } from '../../views/Partners.js';

const NOT_PROVEN = 'Confirm your e-mail address first: follow the link we sent you (or ask for a new one on your account page).';

function httpUrl(text: string): string | null {
  try {
    const u = new URL(text.trim());
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.toString() : null;
  } catch {
    return null;
  }
}

export function registerApply(app: TypedApp, ctx: AppContext): void {
  app.get('/partners/apply', { config: SITE, schema: { hide: true } }, async (request, reply) => {
    const user = request.user;
    const viewer = { userId: user.user_id, csrf: await csrfToken(ctx, request, reply) };
    const errors: Record<string, string> = isProvenAccount(user) ? {} : { form: NOT_PROVEN };
    return sendPage(reply, <ApplyPage viewer={viewer} form={{}} errors={errors} />, isProvenAccount(user) ? 200 : 403);
  });

  app.post(
    '/partners/apply',
    {
      config: SITE,
      schema: formSchema({
        name: Type.String({ maxLength: 100 }),
        site_url: Type.String({ maxLength: 500 }),
        purpose: Type.String({ maxLength: 2000 }),
        origins: Type.Optional(Type.String({ maxLength: 4000 })),
        contact: Type.String({ maxLength: 200 }),
      }),
    },
    async (request, reply) => {
      const user = request.user;
      const b = request.body;
      const form: ApplyForm = { name: b.name, site_url: b.site_url, purpose: b.purpose, origins: b.origins ?? '', contact: b.contact };
      const errors: Record<string, string> = {};
      if (!isProvenAccount(user)) errors.form = NOT_PROVEN;
      const name = b.name.trim();
      if (name === '') errors.name = "Give your application's name.";
      const siteUrl = httpUrl(b.site_url);
      if (!siteUrl) errors.site_url = 'Give its site as an http or https address, such as https://example.com.';
      const purpose = b.purpose.trim();
      if (purpose.length < 10) errors.purpose = 'Say in a sentence or two what it will do with identities.';
      let origins: string[] = [];
      try {
        origins = parseOrigins(b.origins ?? '');
      } catch (e) {
        if (!(e instanceof DashboardError)) throw e;
        errors.origins = e.message;
      }
      const contact = b.contact.trim();
      if (contact === '') errors.contact = 'Say who the operators may write to.';
      if (Object.keys(errors).length === 0 && siteUrl) {
        try {
          const a = await apply(ctx, user, { name, siteUrl, purpose, origins, contact });
          return seeOther(reply, `/partners?msg=${a.status === 'approved' ? 'approved' : 'applied'}`);
        } catch (e) {
          if (!(e instanceof ApplicationError)) throw e;
          errors.form = e.message;
        }
      }
      const viewer = { userId: user.user_id, csrf: await csrfToken(ctx, request, reply) };
      return sendPage(reply, <ApplyPage viewer={viewer} form={form} errors={errors} />, 400);
    },
  );
}
