// The site's static files (stylesheet, enhancement script, icon): read once at start-up and served
// under a content-hashed name, so they can be cached for a year and a change still reaches everyone.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { projectRoot } from '../paths.js';

interface Asset {
  url: string;
  type: string;
  body: Buffer;
}

const DIR = path.join(projectRoot, 'src', 'site', 'assets');
const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

function load(file: string, dir = DIR, name = path.basename(file, path.extname(file))): Asset {
  const body = fs.readFileSync(path.join(dir, file));
  const ext = path.extname(file);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { url: `/assets/${name}.${hash}${ext}`, type: TYPES[ext] ?? 'application/octet-stream', body };
}

/**
 * @simplewebauthn/browser's own browser bundle, served from this site (no CDN): found beside the
 * package's entry point, wherever npm placed the package.
 */
const WEBAUTHN_BUNDLE_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve('@simplewebauthn/browser')), '..', 'dist', 'bundle');

export const ASSETS = {
  css: load('site.css'),
  js: load('site.js'),
  icon: load('icon.svg'),
  webauthn: load('index.umd.min.js', WEBAUTHN_BUNDLE_DIR, 'simplewebauthn-browser'),
  passkeys: load('passkeys.js'),
} as const;

const BY_URL = new Map(Object.values(ASSETS).map((a) => [a.url, a]));

export function registerAssets(app: FastifyInstance): void {
  app.get('/assets/:file', { config: { kind: 'site' }, schema: { hide: true } }, async (request, reply) => {
    const asset = BY_URL.get(request.url.split('?')[0] ?? '');
    if (!asset) return reply.callNotFound();
    return reply
      .type(asset.type)
      .header('Cache-Control', 'public, max-age=31536000, immutable')
      .header('Cross-Origin-Resource-Policy', 'same-origin')
      .send(asset.body);
  });
}
