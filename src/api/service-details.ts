// SPEC §4.2: the catalogue, whole, one entry, or ordered and limited. Rendered answers are cached per
// catalogue version (the hot path is a map lookup), with their ETag.
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import { errors } from '../domain/errors.js';
import { normaliseSvcId } from '../domain/svc-id.js';
import { API_VARY, apiOperation, formatOf } from '../http/api-route.js';
import { etagOf, sendPublic } from '../http/cache-headers.js';
import { listAnswer } from '../http/api-schemas.js';
import { CONTENT_TYPE, list, render, type Doc, type Fields } from '../http/document.js';
import { ORDERS, type Order } from '../services/catalogue-cache.js';

export function serviceFields(e: CatalogueEntry): Fields {
  return {
    svcId: e.svcId,
    svcName: e.svcName,
    svcURL: e.svcURL,
    svcLeftURL: e.svcLeftURL,
    svcRightURL: e.svcRightURL,
    svcMobileURL: e.svcMobileURL,
    svcIphoneURL: e.svcIphoneURL,
    svcFavicon: e.svcFavicon,
    svcIcon: e.svcIcon,
    svcIphoneIcon: e.svcIphoneIcon,
  };
}

const isOrder = (s: string): s is Order => (ORDERS as readonly string[]).includes(s);

function parseLimit(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > 1000) throw errors.invalidRequest('limit must be an integer from 1 to 1000');
  return Number(raw);
}

type Request = { svcId: string } | { order: Order; limit: number | undefined };

function parseRequest(params: Readonly<Record<string, string>>): Request {
  const given = params.order ?? params.order_or_svcId;
  if (given === undefined) return { order: 'alphanumeric', limit: undefined };
  // Service ids and order names are matched in any case, as in every other operation.
  const first = normaliseSvcId(given);
  if (params.limit !== undefined) {
    if (!isOrder(first)) throw errors.invalidRequest(`order must be one of ${ORDERS.join(', ')}; a svcId cannot be combined with a limit`);
    return { order: first, limit: parseLimit(params.limit) };
  }
  return isOrder(first) ? { order: first, limit: undefined } : { svcId: first };
}

// Kept as bytes: a 180 kB string would be encoded to UTF-8 again on every send.
const rendered = new Map<string, { body: Buffer; etag: string }>();

export const serviceDetails = apiOperation({
  operationId: 'service_details',
  summary: 'The catalogue of supported services',
  description:
    'All services (default order `alphanumeric`), one service by id, or ordered by `popularity` (opted-in users with the service), `alphanumeric` (by name), or `combined` (the ten most popular, then the rest by name), optionally limited (1–1000).',
  paths: ['/api/service_details/:api_key', '/api/service_details/:api_key/:order_or_svcId', '/api/service_details/:api_key/:order/:limit'],
  tokenRequired: false,
  cache: 'public',
  answer: listAnswer('services', 'Service'),
  // Three URL shapes that ask different questions, so each is listed; GET, as the answers are cacheable.
  documented: {
    method: 'GET',
    paths: ['/api/service_details/:api_key', '/api/service_details/:api_key/:order_or_svcId', '/api/service_details/:api_key/:order/:limit'],
    summaries: ['The catalogue of supported services', 'One service, or the whole catalogue in an order', 'The first entries of the catalogue in an order'],
  },
  example: { params: { api_key: '$API_KEY', order_or_svcId: 'github', order: 'popularity', limit: '10' } },
  raw: true,
  async handler({ ctx, params, shared, request, reply }): Promise<Doc> {
    const req = parseRequest(params);
    const format = formatOf(request);
    let key: string;
    let build: () => Doc;
    if ('svcId' in req) {
      const snap = await ctx.catalogue.get();
      const entry = snap.byId.get(req.svcId);
      if (!entry) throw errors.serviceNotFound();
      key = `one:${req.svcId}:${format}:${snap.version}`;
      build = () => ({ root: 'services', list: list('service', [serviceFields(entry)]) });
    } else {
      const { list: ordered, stamp } = await ctx.catalogue.ordered(req.order);
      key = `${req.order}:${req.limit ?? 'all'}:${format}:${stamp}`;
      const chosen = req.limit === undefined ? ordered : ordered.slice(0, req.limit);
      build = () => ({ root: 'services', list: list('service', chosen.map(serviceFields)) });
    }
    let hit = rendered.get(key);
    if (!hit) {
      const body = Buffer.from(render(build(), format));
      hit = { body, etag: etagOf(body) };
      if (rendered.size > 5000) rendered.clear();
      rendered.set(key, hit);
    }
    if (shared) {
      await sendPublic(ctx.config, request, reply, { contentType: CONTENT_TYPE[format], body: hit.body, etag: hit.etag, vary: API_VARY });
    } else {
      await reply.type(CONTENT_TYPE[format]).send(hit.body);
    }
    return { root: 'services', text: '' };
  },
});
