// "Find my identities": start a walk from one of the user's pages, follow its progress, add what it
// found. And the identities form's helper that recognises a pasted profile URL.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { addDiscovered, discoveryView, runDueDiscoveries, startDiscovery } from '../../../services/discovery.js';
import { recogniseProfileUrl } from '../../../services/profile-urls.js';
import { formSchema, seeOther, SITE } from '../../http.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { accountPage } from './page.js';

const START_REFUSALS = {
  invalid_url: 'Enter the address of a web page, like https://example.org/.',
  busy: 'A search is already running. Wait for it to finish.',
  throttled: 'You started several searches just now. Try again in a minute.',
} as const;

const pageIdField = Type.String({ pattern: '^[0-9]{1,15}$' });

/** Registered inside the account routes' plugin, whose preHandler sets `request.user`. */
export function registerDiscoveryRoutes(app: TypedApp, ctx: AppContext): void {
  app.post('/account/discover', { config: SITE, schema: formSchema({ url: Type.String({ maxLength: 2048 }) }) }, async (request, reply) => {
    const user = request.user;
    const url = request.body.url;
    const outcome = await startDiscovery(ctx, user, url);
    if (!outcome.started) {
      if (outcome.retryAfterSeconds !== undefined) reply.header('Retry-After', String(outcome.retryAfterSeconds));
      const status = outcome.reason === 'throttled' ? 429 : outcome.reason === 'busy' ? 409 : 400;
      return accountPage(ctx, request, reply, user, { discoverError: START_REFUSALS[outcome.reason], discoverUrl: url }, status);
    }
    // Started here at once rather than on the job's next tick; the claim keeps it to one instance.
    if (ctx.config.backgroundJobs) {
      runDueDiscoveries(ctx, 1).catch((err: unknown) => request.log.error({ err }, 'discovery run failed'));
    }
    return seeOther(reply, '/account#discover');
  });

  app.get('/account/discover/status', { config: SITE, schema: { hide: true } }, async (request, reply) => {
    const user = request.user;
    const view = await discoveryView(ctx, user);
    reply.header('Cache-Control', 'no-store');
    return view ? { status: view.run.status, pagesFetched: view.run.pagesFetched } : { status: 'none', pagesFetched: 0 };
  });

  app.post(
    '/account/discover/add',
    { config: SITE, schema: formSchema({ run_id: pageIdField, page: Type.Optional(Type.Union([pageIdField, Type.Array(pageIdField, { maxItems: 100 })])) }) },
    async (request, reply) => {
      const user = request.user;
      const b = request.body;
      const pages = b.page === undefined ? [] : Array.isArray(b.page) ? b.page : [b.page];
      const added = await addDiscovered(ctx, user, Number(b.run_id), pages.map(Number));
      return seeOther(reply, `/account?msg=${added > 0 ? 'discovered' : 'discovered_none'}#identities`);
    },
  );

  app.get(
    '/account/identities/recognise',
    { config: SITE, schema: { hide: true, querystring: Type.Object({ url: Type.String({ maxLength: 2048 }) }) } },
    async (request, reply) => {
      const found = await recogniseProfileUrl(ctx, request.query.url, { orWebsite: true });
      reply.header('Cache-Control', 'no-store');
      if (found.kind === 'match') return { kind: 'match', svcId: found.svc.svcId, svcName: found.svc.svcName, usrSvcId: found.usrSvcId };
      return found;
    },
  );
}
