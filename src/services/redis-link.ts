// The connection to Redis, which is optional: it shares rate limits and credential throttles
// between instances. Losing it must cost neither answers nor time (docs/operations.md, "When a
// dependency fails"), so:
//
// - nothing waits for it: no offline queue (a command while disconnected fails at once), no
//   retries of a failed command, a short timeout on every command;
// - while it is down the limiters and throttles count in this process instead (RequestLimiter,
//   RedisFailureThrottle), and go back to Redis as soon as it is ready again;
// - its state changes are events (`down`, `up`), which the app logs once each
//   (ops/dependency-log.ts); listening to 'error' also keeps ioredis from printing stack traces.
//
// A connection that stops answering without closing (a stalled network) is noticed by a command
// timing out: the caller reports it with failed(), which drops the connection so that ioredis
// reconnects, and its ready check tells when Redis answers again.
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';

const CONNECT_TIMEOUT_MS = 2000;
/** Reconnection back-off: 100 ms doubling to 2 s, so Redis is used again soon after it returns. */
const reconnectDelay = (attempt: number) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000);

export type RedisState = 'connecting' | 'up' | 'down';

/** Emits `down` (reason) and `up`, once per change of state. */
export class RedisLink extends EventEmitter {
  readonly client: Redis;
  private current: RedisState = 'connecting';
  /** Why it last went down: an error code or ioredis's message, never an address or a password. */
  reason: string | null = null;
  private closed = false;

  /**
   * Loads ioredis only here: most installs run without Redis and need not load it at every start.
   * `commandTimeoutMs`: the longest a caller waits for one command (`REDIS_TIMEOUT_MS`).
   */
  static async connect(url: string, commandTimeoutMs: number): Promise<RedisLink> {
    const { Redis: Client } = await import('ioredis');
    return new RedisLink(url, Client, commandTimeoutMs);
  }

  private constructor(
    url: string,
    Client: typeof Redis,
    readonly commandTimeoutMs: number,
  ) {
    super();
    this.client = new Client(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: commandTimeoutMs,
      connectTimeout: CONNECT_TIMEOUT_MS,
      retryStrategy: reconnectDelay,
    });
    this.client.on('ready', () => this.set('up'));
    this.client.on('error', (err: Error) => this.set('down', reasonOf(err)));
    this.client.on('close', () => this.set('down', this.reason ?? 'connection closed'));
  }

  get state(): RedisState {
    return this.current;
  }

  /** True while commands may be sent; false before the first connection and while it is down. */
  get up(): boolean {
    return this.current === 'up';
  }

  /** Resolves once the first connection attempt has succeeded or failed (at most the connect timeout). */
  async settled(): Promise<void> {
    if (this.current !== 'connecting') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.off('up', done);
        this.off('down', done);
        resolve();
      };
      const timer = setTimeout(done, CONNECT_TIMEOUT_MS + this.commandTimeoutMs);
      this.once('up', done);
      this.once('down', done);
    });
  }

  /**
   * A command failed. An error of Redis's own (a ReplyError: a bug, not an outage) leaves the state
   * as it is; anything else (a timeout, a lost connection) marks Redis down and drops the
   * connection, so that the next successful reconnection, not a guess, marks it up again.
   */
  failed(err: unknown): void {
    if ((err as Error | undefined)?.name === 'ReplyError' || this.closed) return;
    const wasUp = this.current === 'up';
    this.set('down', reasonOf(err));
    if (wasUp) this.client.disconnect(true);
  }

  close(): void {
    this.closed = true;
    this.client.disconnect();
  }

  private set(state: 'up' | 'down', reason?: string): void {
    if (this.closed || state === this.current) return;
    this.current = state;
    if (state === 'down') {
      this.reason = reason ?? null;
      this.emit('down', this.reason);
    } else {
      this.reason = null;
      this.emit('up');
    }
  }
}

function reasonOf(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  if (typeof e?.code === 'string') return e.code;
  // ioredis's own messages ("Command timed out", "Connection is closed."); cut short all the same.
  return typeof e?.message === 'string' ? e.message.slice(0, 80) : 'unknown';
}
