// The OpenAPI 3.1 document: the partner API built from the operations' own schemas
// (openapi-paths.ts), the named answer shapes (api-schemas.ts) and the webhook events. Served at
// /api/openapi.json, readable at /docs (docs-page.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import swagger, { type SwaggerTransformObject } from '@fastify/swagger';
import { OPERATIONS } from '../api/index.js';
import type { ApiError } from '../domain/errors.js';
import { COMPONENT_SCHEMAS } from './api-schemas.js';
import { registerDocsPage } from './docs-page.js';
import { API_DESCRIPTION, apiPaths, COMPONENT_HEADERS } from './openapi-paths.js';
import { openApiWebhooks } from './webhook-events.js';

/** Counts a request against the rate limits (every answer under /api says where its caller stands). */
type CountRequest = (request: FastifyRequest, reply: FastifyReply) => Promise<ApiError | undefined>;

export async function registerOpenApi(app: FastifyInstance, baseUrl: string, countRequest: CountRequest): Promise<void> {
  const paths = apiPaths(OPERATIONS, baseUrl);
  const schemas = JSON.parse(JSON.stringify(COMPONENT_SCHEMAS)) as Record<string, unknown>;
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'idsvc partner API', version: '1', description: API_DESCRIPTION, license: { name: 'MIT', identifier: 'MIT' } },
      servers: [{ url: baseUrl, description: 'This idsvc' }],
      tags: [
        { name: 'partner API', description: 'Version 1 operations under /api/' },
        { name: 'webhooks', description: "Events idsvc POSTs to a partner's webhook endpoint (Standard Webhooks; docs/webhooks.md)" },
      ],
      webhooks: openApiWebhooks(),
    },
    // The routes' schemas only validate; the document's paths and components come from the
    // operations' declarations, so no other route can slip into the partner API's reference.
    transformObject: (document) => ({ ...('openapiObject' in document ? document.openapiObject : {}), paths, components: { schemas, headers: COMPONENT_HEADERS } }) as ReturnType<SwaggerTransformObject>,
  });
  await registerDocsPage(app);
  app.get('/api/openapi.json', { schema: { hide: true }, config: { kind: 'ops' } }, async (request, reply) => {
    const limited = await countRequest(request, reply);
    if (limited) throw limited;
    return app.swagger();
  });
}
