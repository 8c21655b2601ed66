// Real local HTTP servers for the verification tests; counting connections is how the tests prove
// that a refused URL was never connected to.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  server: http.Server;
  host: string;
  port: number;
  /** http://host:port */
  origin: string;
  connections: number;
  requests: string[];
  close(): Promise<void>;
}

export async function startServer(handler: http.RequestListener, host = '127.0.0.1'): Promise<LocalServer> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const state: LocalServer = {
    server,
    host,
    port,
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    connections: 0,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('connection', () => {
    state.connections += 1;
  });
  server.on('request', (req: http.IncomingMessage) => {
    state.requests.push(req.url ?? '');
  });
  return state;
}

/** A port on 127.0.0.1 where nothing listens (bound, then released). */
export async function unusedPort(): Promise<number> {
  const s = await startServer((_req, res) => res.end());
  const port = s.port;
  await s.close();
  return port;
}
