// The identities form: add an identity or change one, typed in or recognised from a pasted
// profile URL. Adding on a service that already has an identity asks first (a service holds one
// identity per person, so adding there replaces); the change form and that question send `replace`.
import { Type } from '@sinclair/typebox';
import { patternAdvice } from '../../../catalogue/pattern-text.js';
import { buildProfileUrl, matchesPattern } from '../../../catalogue/profile-url.js';
import type { AppContext } from '../../../context.js';
import { normaliseSvcId } from '../../../domain/svc-id.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { findCentralIdentity } from '../../../repositories/central-identities.js';
import { setCentralIdentity } from '../../../services/central.js';
import { InvalidUsrSvcIdError, validateUsrSvcId } from '../../../services/partner-data.js';
import { recogniseProfileUrl } from '../../../services/profile-urls.js';
import { checkbox, formSchema, optionalText, seeOther, SITE } from '../../http.js';
import { svcIdField } from './fields.js';
import { accountPage } from './page.js';

export function registerIdentityAdd(app: TypedApp, ctx: AppContext): void {
  const db = ctx.db;
  app.post(
    '/account/identities',
    {
      config: SITE,
      schema: formSchema({
        svc_id: Type.Optional(svcIdField),
        usr_svc_id: Type.Optional(Type.String({ maxLength: 1024 })),
        profile_url: optionalText(2048),
        recognise: checkbox,
        replace: checkbox,
      }),
    },
    async (request, reply) => {
      const user = request.user;
      const b = request.body;
      const profileUrl = (b.profile_url ?? '').trim();
      // A pasted profile URL only fills the form in: the user checks what was recognised, then adds.
      if (profileUrl !== '' && (b.recognise === '1' || !b.svc_id)) {
        const found = await recogniseProfileUrl(ctx, profileUrl, { orWebsite: true });
        if (found.kind === 'match') {
          const recognised = `That is ${found.usrSvcId} on ${found.svc.svcName}. Check the service and name below, then press “Add identity”.`;
          return accountPage(ctx, request, reply, user, { identityForm: { svcId: found.svc.svcId, usrSvcId: found.usrSvcId, profileUrl, recognised } });
        }
        const error =
          found.kind === 'ambiguous'
            ? `That address fits several services (${found.candidates.map((c) => c.svcId).join(', ')}). Choose the service yourself.`
            : 'We know no service with profile addresses like that. Choose the service and type your name there.';
        return accountPage(ctx, request, reply, user, { identityForm: { profileUrl, error } }, 400);
      }
      const form = { svc_id: b.svc_id ?? '', usr_svc_id: b.usr_svc_id ?? '' };
      form.svc_id = normaliseSvcId(form.svc_id);
      const existing = await findCentralIdentity(db, user.id, form.svc_id);
      const changing = existing !== undefined && b.replace === '1' ? form.svc_id : undefined;
      const fail = (error: string) =>
        accountPage(
          ctx,
          request,
          reply,
          user,
          { identityForm: { svcId: form.svc_id, usrSvcId: form.usr_svc_id, error, ...(changing ? { changing } : {}) } },
          400,
        );
      const svc = (await ctx.catalogue.get()).byId.get(form.svc_id);
      if (!svc) return fail(form.svc_id ? 'That service is not in the list.' : 'Choose a service from the list.');
      let usrSvcId: string;
      try {
        usrSvcId = validateUsrSvcId(form.usr_svc_id);
      } catch (e) {
        if (e instanceof InvalidUsrSvcIdError) return fail(`Your name on ${svc.svcName} ${e.rule}.`);
        throw e;
      }
      if (!usrSvcId) return fail(`Type your name on ${svc.svcName}.`);
      if (svc.svcLeftURL !== '' || svc.urlBuilder !== null) {
        if (buildProfileUrl(svc, usrSvcId) === '') {
          if (svc.urlBuilder === 'website') return fail(`“${usrSvcId}” is not an https address of a site. Give it as https://example.com/blog.`);
          return fail(`“${usrSvcId}” does not give a valid address on ${svc.svcName}. Check it for typos.`);
        }
      }
      if (svc.regexCheck !== null && !matchesPattern(svc.regexCheck, usrSvcId)) {
        return fail(`“${usrSvcId}” is not a name ${svc.svcName} allows. ${patternAdvice(svc.regexCheck, svc.svcName)}`);
      }
      if (existing !== undefined && existing.usr_svc_id !== usrSvcId && b.replace !== '1') {
        return accountPage(ctx, request, reply, user, {
          identityForm: { svcId: svc.svcId, usrSvcId, replacing: { svcName: svc.svcName, old: existing.usr_svc_id } },
        });
      }
      await db.write((w) => setCentralIdentity(w, user, svc, usrSvcId, { partnerId: null }, ctx.clock.now()));
      return seeOther(reply, `/account?msg=identity_saved#identity-${svc.svcId}`);
    },
  );
}
