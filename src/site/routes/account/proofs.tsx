// The proofs page of an account (/account/proofs): the person's proof text, what to do on each
// service, and the proof address some methods need (a gist), kept with the identity.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { buildProfileUrl } from '../../../catalogue/profile-url.js';
import type { AppContext } from '../../../context.js';
import { normaliseSvcId } from '../../../domain/svc-id.js';
import type { User } from '../../../repositories/users.js';
import { identitiesWithProofUrls, setProofUrl } from '../../../repositories/proof-urls.js';
import { listCentralIdentities } from '../../../repositories/central-identities.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { providersFor } from '../../../verification/proof-checker.js';
import { identityVariables, proofUrlVariables } from '../../../verification/proof-providers.js';
import { proofForms } from '../../../verification/proof-text.js';
import { formSchema, optionalText, seeOther, sendPage, SITE } from '../../http.js';
import { csrfToken } from '../../session.js';
import { type ProofIdentityView, ProofsPage, type ProofsPageProps } from '../../views/Proofs.js';

const NOTICES: Record<string, string> = {
  saved: 'The proof address is saved. Press “Verify now” on your account page to check it.',
  removed: 'The proof address is removed.',
};

async function proofsPage(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  user: User,
  extra: Pick<ProofsPageProps, 'notice' | 'error'>,
  status = 200,
) {
  const snap = await ctx.catalogue.get();
  const verified = new Map((await listCentralIdentities(ctx.db, user.id)).map((i) => [i.svcId, i.verified]));
  const identities: ProofIdentityView[] = [];
  for (const row of await identitiesWithProofUrls(ctx.db, user.id)) {
    const svc = snap.byId.get(row.svcId);
    if (!svc) continue;
    const providers = providersFor(ctx.config.proofProviders, svc, row.usrSvcId);
    if (providers.length === 0) continue;
    identities.push({
      svcId: svc.svcId,
      svcName: svc.svcName,
      usrSvcId: row.usrSvcId,
      verified: verified.get(svc.svcId) ?? false,
      methods: providers.map((p) => ({
        name: p.name,
        steps: p.steps,
        ...(p.proofUrl ? { proofUrl: { example: p.proofUrl.example, current: row.proofUrl } } : {}),
      })),
    });
  }
  const page = (
    <ProofsPage
      userId={user.user_id}
      csrf={await csrfToken(ctx, request, reply)}
      forms={proofForms(ctx.config.baseUrl, user.user_id)}
      identities={identities}
      {...extra}
    />
  );
  return sendPage(reply, page, status);
}

/** Registered inside the account routes' plugin, whose preHandler sets `request.user`. */
export function registerProofRoutes(app: TypedApp, ctx: AppContext): void {
  app.get('/account/proofs', { config: SITE, schema: { hide: true, querystring: Type.Object({ msg: optionalText(40) }) } }, async (request, reply) => {
    const msg = request.query.msg;
    return proofsPage(ctx, request, reply, request.user, { notice: msg ? NOTICES[msg] : undefined });
  });

  app.post(
    '/account/proofs/:svcId',
    {
      config: SITE,
      schema: { ...formSchema({ proof_url: Type.String({ maxLength: 4096 }) }), params: Type.Object({ svcId: Type.String({ maxLength: 64 }) }) },
    },
    async (request, reply) => {
      const user = request.user;
      const svcId = normaliseSvcId(request.params.svcId);
      const given = request.body.proof_url.trim();
      const refuse = (message: string, status = 400) =>
        proofsPage(ctx, request, reply, user, { error: { svcId, message, value: given.slice(0, 2048) } }, status);
      const identity = (await identitiesWithProofUrls(ctx.db, user.id)).find((i) => i.svcId === svcId);
      const svc = (await ctx.catalogue.get()).byId.get(svcId);
      if (!identity || !svc) return refuse('You have no identity on that service. Add it on your account page first.', 404);
      if (given === '') {
        await ctx.db.write((w) => setProofUrl(w, user.id, svcId, null));
        return seeOther(reply, `/account/proofs?msg=removed#proof-${svcId}`);
      }
      if (given.length > 2048) return refuse('That address is too long.');
      // Only an address a definition reads, naming this identity's own account, is kept: the
      // address decides what is fetched, so nothing else may be.
      const profileUrl = buildProfileUrl(svc, identity.usrSvcId);
      let why = `That is not an address we can read a proof from on ${svc.svcName}.`;
      for (const p of providersFor(ctx.config.proofProviders, svc, identity.usrSvcId)) {
        const vars = identityVariables(p, svc.svcId, identity.usrSvcId, profileUrl);
        const found = vars && p.proofUrl ? proofUrlVariables(p, vars, given) : null;
        if (found && 'vars' in found) {
          await ctx.db.write((w) => setProofUrl(w, user.id, svcId, given));
          return seeOther(reply, `/account/proofs?msg=saved#proof-${svcId}`);
        }
        if (found && 'refused' in found) why = `That proof is not yours on ${svc.svcName}: ${found.refused}.`;
      }
      return refuse(why);
    },
  );
}
