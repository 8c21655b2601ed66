// The least a Node.js server can do per request: one kept answer (a public return_services body of
// six entries, with the headers idsvc sends on a cached public read), by Node's own `http` or by a
// bare Fastify route. bench/instructions.sh counts its instructions (REV `floor-http` or
// `floor-fastify`) beside idsvc's: what any server on this runtime pays before its own work.
//
//   PORT=N node bench/http-floor.mjs http|fastify
import http from 'node:http';
import Fastify from 'fastify';

const entry = '<service><svcId>github</svcId><svcName>GitHub</svcName><usrSvcId></usrSvcId><url></url><verified>FALSE</verified></service>';
const body = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n<services>${entry.repeat(6)}</services>`);
const headers = [
  ['content-type', 'application/xml; charset=utf-8'],
  ['cache-control', 'public, max-age=60, stale-while-revalidate=60'],
  ['etag', '"mB2cHzvT5lqgZJq1pY0rJ2bXw1E"'],
  ['vary', 'Accept, Origin'],
  ['ratelimit-limit', '100000000'],
  ['ratelimit-remaining', '99999999'],
  ['ratelimit-reset', '60'],
  ['x-request-id', 'req-1'],
  ['x-content-type-options', 'nosniff'],
];
const port = Number(process.env.PORT ?? 18191);
const mode = process.argv[2];
if (mode === 'http') {
  http
    .createServer((_req, res) => {
      for (const [name, value] of headers) res.setHeader(name, value);
      res.end(body);
    })
    .listen(port, '127.0.0.1');
} else if (mode === 'fastify') {
  const app = Fastify({ logger: false });
  const answer = (_request, reply) => {
    for (const [name, value] of headers) reply.header(name, value);
    reply.send(body);
  };
  app.get('/readyz', answer);
  app.get('/api/return_services/:api_key/:user_identifier/:profile_type', answer);
  await app.listen({ port, host: '127.0.0.1' });
} else {
  console.error('usage: node bench/http-floor.mjs http|fastify');
  process.exit(2);
}
