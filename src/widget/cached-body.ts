// A static answer prepared once: its bytes, a gzip copy (the catalogue is ~90 KB of JSON, the
// bundle ~40 KB of JavaScript) and a strong ETag per encoding.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { gzipSync } from 'node:zlib';

export interface CachedBody {
  body: Buffer;
  gzip: Buffer;
  /** The tag without quotes; the gzip copy is tagged `{tag}-gz`. */
  tag: string;
}

export function cachedBody(content: string | Buffer): CachedBody {
  const body = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return { body, gzip: gzipSync(body, { level: 9 }), tag: createHash('sha256').update(body).digest('base64url').slice(0, 22) };
}

/**
 * Whether Accept-Encoding lists gzip with no parameter or a q above 0 (RFC 9110 §12.5.3). Read entry
 * by entry, with q at most three decimals: one regex over the whole header was quadratic in a long q value.
 */
function acceptsGzip(request: FastifyRequest): boolean {
  return (request.headers['accept-encoding'] ?? '').split(',').some((entry) => {
    const [coding = '', ...params] = entry.split(';').map((p) => p.trim());
    if (coding.toLowerCase() !== 'gzip') return false;
    if (params.length === 0) return true;
    const q = params.length === 1 ? /^q\s*=\s*(1(?:\.0{0,3})?|0(?:\.\d{0,3})?|\.\d{1,3})$/i.exec(params[0] ?? '') : null;
    return q !== null && Number(q[1]) > 0;
  });
}

/** Sends `cached` as `type`, gzipped when the client takes it; 304 when the client has it already. */
export function sendCached(request: FastifyRequest, reply: FastifyReply, cached: CachedBody, type: string): FastifyReply {
  const gzip = acceptsGzip(request);
  const etag = `"${cached.tag}${gzip ? '-gz' : ''}"`;
  reply.header('ETag', etag).header('Vary', 'Accept-Encoding');
  const given = request.headers['if-none-match'];
  if (given?.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) return reply.code(304).send();
  if (gzip) reply.header('Content-Encoding', 'gzip');
  return reply.type(type).send(gzip ? cached.gzip : cached.body);
}
