// The OpenAPI 3.1 document is generated from the route schemas (SPEC §8): a route with a schema
// documents itself. Served at /api/openapi.json, readable at /docs.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../domain/errors.js';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { openApiWebhooks } from './webhook-events.js';

/** Counts a request against the rate limits (every answer under /api says where its caller stands). */
type CountRequest = (request: FastifyRequest, reply: FastifyReply) => Promise<ApiError | undefined>;

export async function registerOpenApi(app: FastifyInstance, countRequest: CountRequest): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'idsvc partner API',
        version: '1',
        description:
          'Identity aggregation service: look up the online identities a person has opted to share, push changes, link repositories. Every operation answers GET and POST; answers are XML unless `Accept: application/json` or `?format=json`. Secrets (`api_token`, `email_address`, `password`) go in the POST body only. The api_key is public: a call without proof (the api_token, or a signed widget URL) gets the public view, with no `usrSvcId` from the central repository, and draws on the key\'s unproven request budget, apart from the proven one; `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` describe the tightest budget that applied.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: [
        { name: 'partner API', description: 'Version 1 operations under /api/' },
        { name: 'webhooks', description: "Events idsvc POSTs to a partner's webhook endpoint (Standard Webhooks)" },
        { name: 'Gravatar-compatible', description: "Gravatar's REST API v3 profile and its avatars, for clients written for api.gravatar.com (docs/gravatar-compatibility.md)" },
      ],
      components: {
        securitySchemes: { partnerApiToken: { type: 'http', scheme: 'bearer', description: "A partner's api_token, on the Gravatar-compatible routes only." } },
      },
      webhooks: openApiWebhooks(),
    },
    // A schema added with an $id is an OpenAPI component of that name, not `def-N`.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' }, staticCSP: true });
  app.get('/api/openapi.json', { schema: { hide: true }, config: { kind: 'ops' } }, async (request, reply) => {
    const limited = await countRequest(request, reply);
    if (limited) throw limited;
    return app.swagger();
  });
}
