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

interface GeneratedDocument {
  paths?: Record<string, Record<string, { tags?: string[] }>>;
  components?: { schemas?: Record<string, unknown>; [key: string]: unknown };
}

function isGravatarPath(item: Record<string, { tags?: string[] }>): boolean {
  return Object.values(item).some((op) => op.tags?.includes('Gravatar-compatible'));
}

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
        {
          name: 'Gravatar-compatible',
          description: "Gravatar's REST API v3 profile and its avatars, for clients written for api.gravatar.com (docs/gravatar-compatibility.md)",
        },
      ],
      components: {
        securitySchemes: { partnerApiToken: { type: 'http', scheme: 'bearer', description: "A partner's api_token, on the Gravatar-compatible routes only." } },
      },
      webhooks: openApiWebhooks(),
    },
    // A schema added with an $id is an OpenAPI component of that name, not `def-N`.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    // The partner API's paths and components come from the operations' declarations (the routes'
    // schemas only validate); of the other routes only the Gravatar-compatible ones are documented,
    // from their route schemas, so no site or ops route can slip into the reference.
    transformObject: (document) => {
      const generated = ('openapiObject' in document ? document.openapiObject : {}) as GeneratedDocument;
      const gravatarPaths = Object.fromEntries(Object.entries(generated.paths ?? {}).filter(([, item]) => isGravatarPath(item)));
      return {
        ...generated,
        paths: { ...paths, ...gravatarPaths },
        components: { ...generated.components, schemas: { ...generated.components?.schemas, ...schemas }, headers: COMPONENT_HEADERS },
      } as ReturnType<SwaggerTransformObject>;
    },
  });
  await registerDocsPage(app);
  app.get('/api/openapi.json', { schema: { hide: true }, config: { kind: 'ops' } }, async (request, reply) => {
    const limited = await countRequest(request, reply);
    if (limited) throw limited;
    return app.swagger();
  });
}
