// A TCP proxy on loopback that the fault tests put between the server and PostgreSQL or Redis, so
// they can break the connection the way a network, a failover or a proxy restart does:
//
// - cut():     every open connection is destroyed and new ones are refused (the port is closed);
// - freeze():  connections stay open but nothing is forwarded (a stalled network); what was sent
//              meanwhile is delivered on restore, in order, as TCP would after a stall;
// - partition(): connections stay open but what either side sends meanwhile is lost, its closing
//              too (a network dropping packets, where a peer learns that the other gave up only
//              when its own retransmissions, backing off, finally get an answer);
// - restore(): back to forwarding, on the same port.
import net from 'node:net';

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
}

export class TcpProxy {
  private server: net.Server | null = null;
  private readonly pairs = new Set<Pair>();
  private frozen = false;
  /** Partitioned: what arrives is dropped instead of held. */
  private dropping = false;
  /** What arrived while frozen, to be delivered in order on restore. */
  private held: (() => void)[] = [];
  port = 0;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Starts a proxy to `host:port` on a free loopback port. */
  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort);
    await proxy.listen(0);
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  get connections(): number {
    return this.pairs.size;
  }

  /** The local ports of the proxy's connections to the target: how PostgreSQL's pg_stat_activity.client_port names them. */
  upstreamPorts(): number[] {
    return [...this.pairs].map((p) => p.upstream.localPort).filter((n): n is number => typeof n === 'number');
  }

  private listen(port: number): Promise<void> {
    const server = net.createServer((client) => this.accept(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        const address = server.address();
        this.port = typeof address === 'object' && address ? address.port : port;
        resolve();
      });
    });
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, this.targetHost);
    const pair = { client, upstream };
    this.pairs.add(pair);
    const forward = (from: net.Socket, to: net.Socket) => {
      from.on('data', (chunk: Buffer) => this.deliver(() => void (to.destroyed || to.write(chunk))));
      from.on('end', () => this.deliver(() => void (to.destroyed || to.end())));
    };
    forward(client, upstream);
    forward(upstream, client);
    const drop = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', () => this.deliver(drop));
    upstream.on('error', () => this.deliver(drop));
    client.on('close', () => this.deliver(drop));
    upstream.on('close', () => this.deliver(drop));
  }

  private deliver(step: () => void): void {
    if (this.dropping) return;
    if (this.frozen) this.held.push(step);
    else step();
  }

  /** Destroys every connection and refuses new ones until restore(). */
  async cut(): Promise<void> {
    this.frozen = false;
    this.dropping = false;
    this.held = [];
    const server = this.server;
    this.server = null;
    const closed = server ? new Promise<void>((r) => server.close(() => r())) : Promise.resolve();
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    await closed;
  }

  /** Stops forwarding in both directions; connections (old and new) stay open. */
  freeze(): void {
    this.frozen = true;
  }

  /** Drops what either side sends, closings included; connections (old and new) stay open. */
  partition(): void {
    this.dropping = true;
  }

  /** Forwards again: re-opens the port after a cut, delivers what a freeze held. */
  async restore(): Promise<void> {
    if (!this.server) await this.listen(this.port);
    this.dropping = false;
    this.frozen = false;
    const held = this.held;
    this.held = [];
    for (const step of held) step();
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
