// An example partner site: one page with the idsvc widget, and the two small endpoints its callbacks
// post to. This is the part a partner copies. It runs on the partner's server, so it may hold the
// api_token; the browser never sees the token, only a signed widget URL.
//
//   GET  /                       the signed-in person's page, with the widget
//   GET  /two-widgets            the same person's identities in two places on one page
//   POST /idsvc/service-change   from service_change_callback_idsvc → update_service
//   POST /idsvc/sync             from init_sync_user_idsvc → sync_user → handle_sync_results_idsvc
//   POST /idsvc/webhooks         idsvc's signed events (webhooks.ts), shown on GET /events
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { IdsvcClient, IdsvcError } from '@idsvc/client';
import { webhookReceiver } from './webhooks.js';

export interface PartnerSiteOptions {
  /** Where idsvc runs, e.g. https://id.example.org */
  idsvcUrl: string;
  apiKey: string;
  apiToken: string;
  /** The signed-in person. A real site takes this from its own session. */
  user: { name: string; email: string };
  /** The secret idsvc signs this partner's webhook events with (`whsec_…`, from the operator). Read on each event. */
  webhookSecret?: string;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const STATIC: Record<string, { type: string; body: Buffer }> = {
  '/partner.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(path.join(here, 'public', 'partner.js')) },
  '/partner.css': { type: 'text/css; charset=utf-8', body: readFileSync(path.join(here, 'public', 'partner.css')) },
  '/events.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(path.join(here, 'public', 'events.js')) },
};

/** idsvc accepts several shapes of user_identifier; the SHA-256 of the e-mail address keeps it out of pages. */
export function userIdentifierOf(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

function page(title: string, body: string, script = '/partner.js'): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Example partner</title>
<link rel="stylesheet" href="/partner.css">
<script src="${script}"></script>
</head>
<body>
<header><strong>Example partner</strong> <nav><a href="/">Profile</a> <a href="/two-widgets">Two widgets</a> <a href="/events">Webhook events</a></nav></header>
<main>
${body}
<h2>Activity</h2>
<ol id="activity" aria-live="polite"></ol>
</main>
</body>
</html>
`;
}

export function createPartnerSite(options: PartnerSiteOptions): http.Server {
  const client = new IdsvcClient({ baseUrl: options.idsvcUrl, apiKey: options.apiKey, apiToken: options.apiToken });
  const idsvcOrigin = new URL(options.idsvcUrl).origin;
  const me = { ...options.user, userIdentifier: userIdentifierOf(options.user.email) };
  const webhooks = webhookReceiver(() => options.webhookSecret);

  /** A <script> tag for the widget, signed so it shows what this site pushed (the private view). */
  const widgetTag = async (displaySync: boolean, lang: string | null) => {
    const src = await client.widgetUrl(me.userIdentifier, { displaySync, expiresInSeconds: 600, ...(lang ? { lang } : {}) });
    return `<script src="${escapeHtml(src)}"></script>`;
  };

  const pages: Record<string, (lang: string | null) => Promise<string>> = {
    '/': async (lang) =>
      page(
        'Your profile',
        `<h1>Your profile</h1>
<p>Signed in as <strong>${escapeHtml(me.name)}</strong>.</p>
<section class="card"><h2>Your identities elsewhere</h2>
<div id="idsvc-widget">Loading your identities…</div>
${await widgetTag(true, lang)}
</section>`,
      ),
    '/two-widgets': async (lang) =>
      page(
        'Two widgets',
        `<h1>Two widgets on one page</h1>
<div class="columns">
<section class="card"><h2>Profile card</h2>${await widgetTag(false, lang)}</section>
<section class="card"><h2>Settings</h2>${await widgetTag(true, lang)}</section>
</div>`,
      ),
    '/events': async () =>
      page(
        'Webhook events',
        `<h1>Webhook events</h1>
<p>What idsvc has told this site, newest first, as it arrives: each event verified with the webhook secret${options.webhookSecret ? '' : ' (none is set: start the site with IDSVC_WEBHOOK_SECRET)'}.</p>
<p id="no-events">None yet. <code>idsvc partner test-webhook KEY</code> sends a <code>ping</code>.</p>
<ol id="events" aria-live="polite"></ol>`,
        '/events.js',
      ),
  };

  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const render = pages[url.pathname];
    if (req.method === 'GET' && render) {
      // Signing the widget URL uses Web Crypto, which is asynchronous: render, then answer.
      void render(url.searchParams.get('lang')).then(
        (html) => {
          res.writeHead(200, {
            'Content-Type': 'text/html; charset=utf-8',
            // The page holds a signed widget URL: keep it out of shared caches.
            'Cache-Control': 'private, no-store',
            // What the widget needs from a page's CSP (docs/widget.md): its scripts and its catalogue
            // come from idsvc; service icons from anywhere over https.
            'Content-Security-Policy': `default-src 'self'; script-src 'self' ${idsvcOrigin}; connect-src 'self' ${idsvcOrigin}; img-src 'self' https: data:; style-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
            // The default policy, said out loud: idsvc checks the origin in the Referer of the widget's script.
            'Referrer-Policy': 'strict-origin-when-cross-origin',
            'X-Content-Type-Options': 'nosniff',
          });
          res.end(html);
        },
        (err: unknown) => {
          console.error('example partner site:', err);
          res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end('Internal error');
        },
      );
      return;
    }
    if (req.method === 'POST' && url.pathname === '/idsvc/webhooks') {
      void webhooks.receive(req, res).catch((err: unknown) => {
        console.error('example partner site:', err);
        if (!res.headersSent) sendJson(res, 500, { ok: false, error: 'Internal error' });
      });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/events/stream') return webhooks.stream(req, res);
    const file = STATIC[url.pathname];
    if (req.method === 'GET' && file) {
      res.writeHead(200, { 'Content-Type': file.type, 'X-Content-Type-Options': 'nosniff' });
      res.end(file.body);
      return;
    }
    if (req.method === 'POST' && (url.pathname === '/idsvc/service-change' || url.pathname === '/idsvc/sync')) {
      void handlePost(req, res, url.pathname).catch((err: unknown) => {
        console.error('example partner site:', err);
        if (!res.headersSent) sendJson(res, 500, { ok: false, error: 'Internal error' });
      });
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('Not found');
  });

  async function handlePost(req: http.IncomingMessage, res: http.ServerResponse, pathname: string): Promise<void> {
    // A cross-site form cannot send JSON without a preflight, and a browser always names the origin
    // of a POST: together a minimal CSRF defence. Use your framework's CSRF protection instead.
    const sameOrigin = req.headers.origin === `http://${req.headers.host}` || req.headers.origin === `https://${req.headers.host}`;
    if (!sameOrigin || !/^application\/json\b/.test(req.headers['content-type'] ?? '')) {
      return sendJson(res, 403, { ok: false, error: 'Cross-site request refused' });
    }
    const body = await readJson(req);
    // Never trust the browser about who it is: the widget hands back the user_identifier of its
    // URL, and this site only accepts the signed-in person's.
    if (body.userIdentifier !== me.userIdentifier) return sendJson(res, 403, { ok: false, error: 'Not your identities' });

    if (pathname === '/idsvc/service-change') {
      try {
        const saved = await client.updateService(me.userIdentifier, String(body.svcId ?? ''), String(body.usrSvcId ?? ''));
        return sendJson(res, 200, { ok: true, ...saved });
      } catch (err) {
        if (err instanceof IdsvcError) return sendJson(res, 502, { ok: false, error: err.message });
        throw err;
      }
    }

    // The answer of sync_user goes back to the page as it is; the widget reads it and says what happened.
    const answer = await client.syncUserForWidget(me.userIdentifier, {
      email: String(body.email ?? ''),
      password: String(body.password ?? ''),
      endUserIp: req.socket.remoteAddress ?? '',
    });
    res.writeHead(200, { 'Content-Type': 'application/xml; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(answer.xml);
  }
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(value));
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 16 * 1024) throw new Error('request body too large');
    chunks.push(chunk);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
