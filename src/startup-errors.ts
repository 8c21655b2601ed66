// Start-up failures that are the environment's doing (a database that cannot be reached, a port
// already taken) become one sentence naming the variable to change, instead of a stack trace or a
// library's message ("migration ? failed", "listen EADDRINUSE") that leaves the operator guessing.
import net from 'node:net';
import type { Config } from './config.js';

export class StartupError extends Error {
  constructor(
    /** The environment variable to change. */
    readonly variable: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

interface SystemError extends Error {
  code?: string;
  errors?: unknown[];
}

/** The innermost reason: Node's connection attempts nest (AggregateError, `cause`), and some carry no message. */
function reasonOf(err: unknown): string {
  let e = err as SystemError | undefined;
  for (let i = 0; i < 5 && e && e.cause instanceof Error; i++) e = e.cause as SystemError;
  if (!(e instanceof Error)) return String(err);
  if (Array.isArray(e.errors) && e.errors.length > 0) return [...new Set(e.errors.map(reasonOf))].join('; ');
  return e.message || e.code || e.name;
}

function codeOf(err: unknown): string | undefined {
  let e = err as SystemError | undefined;
  for (let i = 0; i < 5 && e; i++) {
    if (typeof e.code === 'string') return e.code;
    if (Array.isArray(e.errors) && e.errors.length > 0) return codeOf(e.errors[0]);
    e = e.cause as SystemError | undefined;
  }
  return undefined;
}

/** A PostgreSQL URL without its password or query (either may hold a secret): user@host:port/db. */
export function describePostgresUrl(url: string): string {
  try {
    const u = new URL(url);
    const user = u.username ? `${decodeURIComponent(u.username)}@` : '';
    return `postgres://${user}${u.host}${u.pathname}`;
  } catch {
    return 'postgres://…';
  }
}

function withoutSecrets(text: string, url: string): string {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password ? text.split(password).join('***') : text;
  } catch {
    return text;
  }
}

/** Whatever went wrong opening, migrating or first reading the database is the database's named by DATABASE_URL. */
export function explainDatabaseFailure(config: Pick<Config, 'databaseUrl'>, err: unknown): unknown {
  if (err instanceof StartupError) return err;
  const url = config.databaseUrl;
  // A migration that ran and failed is worth naming; "migration ? failed" only means no connection.
  const migration = err instanceof Error ? /^migration (\S+) failed: /.exec(err.message)?.[1] : undefined;
  const reason = withoutSecrets(`${migration && migration !== '?' ? `migration ${migration} failed: ` : ''}${reasonOf(err)}`, url);
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    return new StartupError(
      'DATABASE_URL',
      `cannot use the SQLite database ${file} that DATABASE_URL names: ${reason}. Set DATABASE_URL to sqlite:PATH, a database file (or one to create) in a directory this process may write.`,
      { cause: err },
    );
  }
  return new StartupError(
    'DATABASE_URL',
    `cannot use the PostgreSQL database ${describePostgresUrl(url)} that DATABASE_URL names: ${reason}. Check DATABASE_URL, and that PostgreSQL runs there and lets this user in.`,
    { cause: err },
  );
}

/** Runs one step of opening the database; a failure is explained naming DATABASE_URL. */
export async function databaseStep<T>(config: Pick<Config, 'databaseUrl'>, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw explainDatabaseFailure(config, err);
  }
}

/**
 * Why a listener could not start, naming the variables that chose its address. `portVariable` is
 * PORT for the server and METRICS_PORT for the metrics listener (whose address is fixed, so no HOST).
 */
export function explainListenError(err: unknown, where: { port: number; host: string; portVariable: string; hostVariable: string | null }): unknown {
  if (err instanceof StartupError) return err;
  const code = codeOf(err);
  const { port, host, portVariable, hostVariable } = where;
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const hostHint = hostVariable ? ` (or ${hostVariable})` : '';
  switch (code) {
    case 'EADDRINUSE':
      return new StartupError(
        portVariable,
        `cannot listen on ${address}: the address is already in use. Stop what listens there, or set ${portVariable}${hostHint} to a free one.`,
        { cause: err },
      );
    case 'EACCES':
    case 'EPERM':
      return new StartupError(
        portVariable,
        `cannot listen on ${address}: this process may not use port ${port}. Set ${portVariable} to 1024 or above, or give the process that right.`,
        { cause: err },
      );
    case 'EADDRNOTAVAIL':
    case 'EAFNOSUPPORT':
      if (hostVariable)
        return new StartupError(
          hostVariable,
          `cannot listen on ${address}: ${host} is not an address of this machine. Set ${hostVariable} to one of its addresses (127.0.0.1, or 0.0.0.0 for all).`,
          { cause: err },
        );
      break;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'EAI_FAIL':
      if (hostVariable)
        return new StartupError(
          hostVariable,
          `cannot listen on ${address}: "${host}" is neither an IP address nor a name that resolves. Set ${hostVariable} to one of this machine's addresses (127.0.0.1, or 0.0.0.0 for all).`,
          { cause: err },
        );
      break;
  }
  return new StartupError(
    hostVariable ? `${portVariable}/${hostVariable}` : portVariable,
    `cannot listen on ${address}: ${reasonOf(err)}. Check ${portVariable}${hostHint}.`,
    { cause: err },
  );
}

/**
 * Fails at once, naming PORT or HOST, when the server could not listen where it is told to: checked
 * by listening there for a moment before the database is opened and migrated, which can take long,
 * so a port in use is said in a second instead of after the migrations. (Something may still take
 * the port in between; the real listen reports that the same way.)
 */
export async function assertCanListen(config: Pick<Config, 'port' | 'host'>): Promise<void> {
  if (config.port === 0) return;
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ port: config.port, host: config.host, exclusive: true }, resolve);
    });
  } catch (err) {
    throw explainListenError(err, { port: config.port, host: config.host, portVariable: 'PORT', hostVariable: 'HOST' });
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
