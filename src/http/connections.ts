// No connection may hold the server indefinitely, and no one address may hold many (docs/operations.md,
// "Connections and timeouts"). Node enforces the header and request timeouts itself, on a timer that
// visits every open connection; what it refuses reaches protocol-errors.ts and is answered in the
// API's format. The cap counts the socket's peer, so a trusted proxy (TRUST_PROXY) is exempt: every
// client behind it shares its address, and limiting them is the proxy's job.
import type { ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { ApiError } from '../domain/errors.js';

type ConnectionSettings = Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs' | 'databaseTimeoutMs'>;

/** What a request may spend waiting on the database beyond DATABASE_TIMEOUT_MS before its answer is written. */
const ANSWER_MARGIN_MS = 5_000;

/** Fastify's and Node's server options for the timeouts. */
export function timeoutOptions(config: ConnectionSettings): {
  http: ServerOptions;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionTimeout: number;
} {
  return {
    http: {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      // Node checks the two timeouts every 30 s by default, which would let a connection live 30 s
      // past them; at most a second late, and often enough for short test settings.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.headersTimeoutMs / 4))),
    },
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // A connection on which nothing moves either way (a client that stopped reading its answer).
    // Nothing moves either while an answer waits for the database, so that wait must end first and
    // the client hear `unavailable` rather than see its connection dropped.
    connectionTimeout: Math.max(config.requestTimeoutMs, config.databaseTimeoutMs + ANSWER_MARGIN_MS),
  };
}

/** Whether a directly connected peer is one of the proxies TRUST_PROXY names (hop 0: the socket's peer). */
export function trustedPeer(trust: Config['trustProxy']): (address: string) => boolean {
  if (trust === false) return () => false;
  // `on` trusts every peer, and a hop count trusts the nearest hop, which is always the peer.
  if (trust === true || typeof trust === 'number') return () => true;
  const trusted = proxyAddr.compile(trust.split(','));
  return (address) => trusted(address, 0);
}

/**
 * Counts open connections per peer address. A connection past the cap is served nothing: its
 * first request is answered `rate_limited` (429, Retry-After) in the format its path asks for,
 * and the connection closed; one that sends no request is closed by the header timeout.
 */
export function installConnectionCap(app: FastifyInstance, perAddress: number, isTrustedPeer: (address: string) => boolean): void {
  if (perAddress === 0) return;
  const open = new Map<string, number>();
  const overCap = new WeakSet<Socket>();
  app.server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || isTrustedPeer(address)) return;
    const count = (open.get(address) ?? 0) + 1;
    open.set(address, count);
    if (count > perAddress) overCap.add(socket);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!overCap.has(request.raw.socket)) return done();
    reply.header('Connection', 'close');
    done(new ApiError('rate_limited', `Too many connections from your address (at most ${perAddress}); send requests on those already open`, 1));
  });
}
