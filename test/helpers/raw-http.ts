// A raw HTTP/1.1 client over node:net, for what fetch() cannot send or hides: oversized headers,
// bodies on GET, malformed request lines, a body the server refuses while it is still arriving.
// It reads until the server closes the connection, and says whether the answer arrived whole.
import net from 'node:net';

export interface RawAnswer {
  /** 0 when no status line arrived. */
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
  /** The body is as long as Content-Length said (or the chunked body ended properly). */
  complete: boolean;
  /** The socket error that ended the connection, if any (ECONNRESET when the server reset it). */
  error?: string;
}

export interface RawRequestOptions {
  /** Written after the head, in one write (a Buffer is sent as is). */
  body?: string | Buffer;
  /** Give up after this long (the answer is then incomplete). */
  timeoutMs?: number;
  /** Connect from this local address (another loopback address, such as 127.0.0.2, is another client). */
  localAddress?: string;
}

/** Sends `head` (request line and headers, CRLF-terminated, blank line included) and reads the answer. */
export function rawRequest(baseUrl: string, head: string, options: RawRequestOptions = {}): Promise<RawAnswer> {
  const { port, hostname } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect({ port: Number(port), host: hostname, ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
    const chunks: Buffer[] = [];
    let error: string | undefined;
    const timer = setTimeout(() => socket.destroy(), options.timeoutMs ?? 20_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ ...parseAnswer(Buffer.concat(chunks), head.startsWith('HEAD ')), ...(error ? { error } : {}) });
    });
    socket.write(head);
    if (options.body !== undefined) socket.write(options.body);
  });
}

export function parseAnswer(bytes: Buffer, headRequest: boolean): Omit<RawAnswer, 'error'> {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: bytes.toString('utf8'), complete: false };
  const [statusLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const rest = bytes.subarray(end + 4);
  // The answer to HEAD, and a 204 or 304, is the head alone, whatever its Content-Length says (RFC 9112 §6.3).
  if (headRequest || status === 204 || status === 304) return { status, headers, body: rest.toString('utf8'), complete: rest.length === 0 };
  if (headers['transfer-encoding'] === 'chunked') return { status, headers, ...dechunk(rest) };
  const length = Number(headers['content-length']);
  const complete = Number.isInteger(length) && rest.length === length;
  return { status, headers, body: rest.toString('utf8'), complete };
}

function dechunk(bytes: Buffer): { body: string; complete: boolean } {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = bytes.indexOf('\r\n', at);
    if (eol < 0) return { body: Buffer.concat(parts).toString('utf8'), complete: false };
    const size = parseInt(bytes.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isInteger(size)) return { body: Buffer.concat(parts).toString('utf8'), complete: false };
    if (size === 0) return { body: Buffer.concat(parts).toString('utf8'), complete: true };
    parts.push(bytes.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
    if (at > bytes.length) return { body: Buffer.concat(parts).toString('utf8'), complete: false };
  }
}
