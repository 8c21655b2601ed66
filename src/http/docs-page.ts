// The API reference page at /docs: Swagger UI, served from this idsvc's own node_modules (no
// third-party loads, which the page's CSP also forbids), reading the document at /api/openapi.json.
import type { FastifyInstance } from 'fastify';
import swaggerUi from '@fastify/swagger-ui';

/** Everything the page loads comes from this idsvc; Swagger UI sets a few style attributes itself. */
export const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; form-action 'self'; frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'";

export async function registerDocsPage(app: FastifyInstance): Promise<void> {
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // BaseLayout: no top bar whose URL box invites loading documents from elsewhere.
    uiConfig: { docExpansion: 'list', layout: 'BaseLayout', deepLinking: true, defaultModelsExpandDepth: 1 },
    // No validator badge: Swagger UI would fetch it from a third party.
    validatorUrl: false,
    staticCSP: DOCS_CSP,
    theme: { title: 'idsvc API reference' },
    uiHooks: {
      // The page reads the one served document (counted against the rate limits like any /api read).
      onRequest: (request, reply, done) => {
        if (/^\/docs\/(json|yaml)(\?|$)/.test(request.url)) {
          reply.redirect('/api/openapi.json');
          return;
        }
        done();
      },
    },
  });
}
