// The widget's static side (SPEC §7): the versioned bundle and the catalogue it offers in its
// picker. Both are the same for everyone, so shared caches may keep them; the per-user boot script
// is the service_collection_widget operation (src/api/service-collection-widget.ts).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import type { AppContext } from '../context.js';
import { ApiError, errors } from '../domain/errors.js';
import { widgetBundle } from './bundle.js';
import { cachedBody, sendCached, type CachedBody } from './cached-body.js';

export const CATALOGUE_PATH = '/widget/catalogue.json';
export const CATALOGUE_MAX_AGE = 300;

export const catalogueUrl = (ctx: AppContext) => `${ctx.config.baseUrl}${CATALOGUE_PATH}`;
export const bundleUrl = (ctx: AppContext, file: string) => `${ctx.config.baseUrl}/widget/${file}`;

const signUpUrls = new WeakMap<AppContext['config'], string>();
/** The sign-up page the widget offers newcomers, on BASE_URL's origin: worked out once, not parsed at every widget request. */
export function signUpUrl(ctx: AppContext): string {
  let url = signUpUrls.get(ctx.config);
  if (url === undefined) {
    url = new URL('/signup', ctx.config.baseUrl).href;
    signUpUrls.set(ctx.config, url);
  }
  return url;
}

/** What the widget's picker needs of a catalogue entry (widget/src/types.ts CatalogueEntry). */
function pickerEntry(e: CatalogueEntry) {
  return {
    svcId: e.svcId,
    svcName: e.svcName,
    svcLeftURL: e.svcLeftURL,
    svcRightURL: e.svcRightURL,
    regexCheck: e.regexCheck,
    urlBuilder: e.urlBuilder,
    svcFavicon: e.svcFavicon,
  };
}

/** Pages on any origin load these with <script src> and fetch(): let them, also under COEP. */
function crossOrigin(reply: FastifyReply): FastifyReply {
  return reply.header('Access-Control-Allow-Origin', '*').header('Cross-Origin-Resource-Policy', 'cross-origin');
}

export function registerWidget(app: FastifyInstance, ctx: AppContext): void {
  const hidden = { hide: true } as const;
  const rendered = new Map<string, CachedBody>();

  app.get(CATALOGUE_PATH, { config: { kind: 'api' }, schema: hidden }, async (request, reply) => {
    const { list, stamp } = await ctx.catalogue.ordered('combined');
    let hit = rendered.get(stamp);
    if (!hit) {
      hit = cachedBody(JSON.stringify(list.map(pickerEntry)));
      rendered.clear(); // only the newest list is asked for
      rendered.set(stamp, hit);
    }
    crossOrigin(reply).header('Cache-Control', `public, max-age=${CATALOGUE_MAX_AGE}`);
    return sendCached(request, reply, hit, 'application/json; charset=utf-8');
  });

  app.get<{ Params: { file: string } }>('/widget/:file', { config: { kind: 'widget' }, schema: hidden }, async (request, reply) => {
    const file = await widgetBundle.file(request.params.file);
    if (!file) throw new ApiError('not_found', 'No such widget bundle');
    crossOrigin(reply).header('Cache-Control', 'public, max-age=31536000, immutable');
    return sendCached(request, reply, file, 'text/javascript; charset=utf-8');
  });

  // The seed's widget path has three segments; POST on two is unsync_user (src/api/unsync-user.ts).
  // A GET on two is a page that forgot display_sync: say so where its developer looks, the console.
  app.get('/api/service_collection_widget/:api_key/:user_identifier', { config: { kind: 'widget' }, schema: hidden }, async () => {
    throw errors.invalidRequest('display_sync is missing: the widget path ends in /TRUE or /FALSE');
  });
}
