// The API reference page at /docs: Swagger UI, served from this idsvc's own node_modules (no
// third-party loads, which the page's CSP also forbids), reading and linking the document at its
// documented address, /api/openapi.json.
import type { FastifyInstance } from 'fastify';
import swaggerUi from '@fastify/swagger-ui';

/** Everything the page loads comes from this idsvc; Swagger UI sets a few style attributes itself. */
export const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; form-action 'self'; frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'";

/** Where Swagger UI's start-up script points it: its own `./json`, which the page then shows as the document's address. */
const UI_DOCUMENT_URL = "resolveUrl('./json')";
/** The documented address instead, so the link under the title is the one the docs name. */
const DOCUMENT_URL = "new URL('/api/openapi.json', window.location.href).href";

export async function registerDocsPage(app: FastifyInstance): Promise<void> {
  // In a scope of its own, so that the hook below sees only the page's routes.
  await app.register(registerUi);
}

async function registerUi(app: FastifyInstance): Promise<void> {
  app.addHook('onSend', async (request, _reply, payload) => {
    if (request.url !== '/docs/static/swagger-initializer.js' || typeof payload !== 'string') return payload;
    if (!payload.includes(UI_DOCUMENT_URL)) throw new Error('Swagger UI start-up script changed: the document URL is no longer where docs-page.ts expects it');
    return payload.replace(UI_DOCUMENT_URL, DOCUMENT_URL);
  });
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
