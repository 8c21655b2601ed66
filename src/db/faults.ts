// Which driver errors mean "the database cannot be used right now" rather than "this request or
// this code is wrong". The HTTP edge answers the first kind with `unavailable` (503, Retry-After)
// instead of `internal_error`, so clients retry instead of reporting a bug; nothing else decides it.
//
// PostgreSQL: the connection could not be made or was lost (socket errors, the pool's and the
// client's own timeouts, pg's "Connection terminated" messages, which carry no code), or the
// server says it cannot serve (SQLSTATE class 08 connection exception, 57P01–57P03 shutdown /
// starting up, 53xxx out of resources, 25006 a read-only standby after a failover, 57014 a
// statement cancelled by a timeout).
// SQLite: the file is locked by another process beyond busy_timeout, cannot be written (read-only,
// disk full, I/O error) or cannot be opened. A corrupt file (SQLITE_CORRUPT) is not transient: it
// stays internal_error.

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

const PG_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

const PG_STATES = /^(08...|57P0[123]|53...|25006|57014)$/;

const SQLITE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY)(_|$)/;

/** The code (or, for pg's codeless connection errors, the message) that made `err` an outage, else null. */
export function unavailableCause(err: unknown, depth = 0): string | null {
  if (!err || typeof err !== 'object' || depth > 4) return null;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (SOCKET_CODES.has(code) || PG_STATES.test(code) || SQLITE_CODES.test(code)) return code;
  const message = typeof e.message === 'string' ? e.message : '';
  const known = PG_MESSAGES.find((m) => message.startsWith(m));
  if (known) return known;
  // Node reports a refused connection to a name with several addresses as an AggregateError.
  if (Array.isArray(e.errors)) {
    for (const inner of e.errors) {
      const found = unavailableCause(inner, depth + 1);
      if (found) return found;
    }
  }
  return unavailableCause(e.cause, depth + 1);
}

export function isUnavailable(err: unknown): boolean {
  return unavailableCause(err) !== null;
}

const TIMEOUT_MESSAGES = ['timeout exceeded when trying to connect', 'Query read timeout'];

/**
 * Whether `err` is an outage the caller already waited the whole timeout for (a stalled database,
 * not a refused or dropped connection): trying again at once would only wait as long again.
 */
export function isTimedOut(err: unknown): boolean {
  const cause = unavailableCause(err);
  return cause !== null && (cause === 'ETIMEDOUT' || cause === '57014' || TIMEOUT_MESSAGES.includes(cause));
}
