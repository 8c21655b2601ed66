// Who may read /metrics. Metrics tell an outsider the traffic per operation, error
// rates and the process's memory, so they are not public: on the public port only with
// METRICS_TOKEN as a bearer token, or on METRICS_PORT, a listener bound to loopback that only
// programs on the same machine (a local Prometheus or agent) can reach. With neither, no /metrics.
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Metrics } from '../http/metrics.js';
import { explainListenError } from '../startup-errors.js';

export const METRICS_HOST = '127.0.0.1';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Compared as digests, so the time taken says nothing about the token, not even its length. */
function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return m !== null && timingSafeEqual(digest(m[1]!), expected);
}

export function registerMetricsAccess(app: FastifyInstance, config: Pick<Config, 'metricsToken' | 'metricsPort'>, metrics: Metrics): void {
  if (config.metricsToken !== null) {
    const expected = digest(config.metricsToken);
    app.get('/metrics', { config: { kind: 'ops' }, schema: { hide: true } }, async (request, reply) => {
      if (!bearerMatches(request.headers.authorization, expected)) {
        return reply
          .code(401)
          .header('WWW-Authenticate', 'Bearer realm="metrics"')
          .header('Cache-Control', 'no-store')
          .type('text/plain; charset=utf-8')
          .send('401 Unauthorized: /metrics needs the header "Authorization: Bearer <METRICS_TOKEN>"\n');
      }
      return reply
        .type(metrics.registry.contentType)
        .header('Cache-Control', 'no-store')
        .send(await metrics.registry.metrics());
    });
  }
  const port = config.metricsPort;
  if (port !== null) {
    let server: http.Server | undefined;
    // Started with the app (listen or ready), closed with it, so tests and `serve` treat it alike.
    app.addHook('onReady', async () => {
      server = await listenForMetrics(port, metrics);
      const bound = (server.address() as AddressInfo).port;
      app.log.info({ metricsUrl: `http://${METRICS_HOST}:${bound}/metrics` }, 'metrics listening on loopback');
    });
    app.addHook('onClose', async () => {
      await new Promise<void>((resolve) => {
        if (!server) return resolve();
        server.close(() => resolve());
        // A scraper's keep-alive connection would hold shutdown up to its timeout; a scrape cut short is simply retried.
        server.closeAllConnections();
      });
    });
  }
}

/** A bare HTTP listener on loopback that answers GET/HEAD /metrics and 404 to anything else. */
async function listenForMetrics(port: number, metrics: Metrics): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 Not Found: only /metrics is served here\n');
      return;
    }
    metrics.registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('500 metrics could not be collected\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(explainListenError(err, { port, host: METRICS_HOST, portVariable: 'METRICS_PORT', hostVariable: null })));
    server.listen(port, METRICS_HOST, () => resolve());
  });
  return server;
}
