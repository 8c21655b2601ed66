// A real SMTP server in the test process (smtp-server), with messages read by a real parser
// (mailparser). It can be stopped and started again on the same port, to play a relay outage.
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  raw: string;
  parsed: ParsedMail;
  /** The envelope recipients. */
  rcptTo: string[];
}

export interface TestSmtp {
  readonly port: number;
  /** SMTP_URL for the app (credentials go in SMTP_USER / SMTP_PASSWORD). */
  readonly url: string;
  readonly received: ReceivedMail[];
  /** Recipients refused with a permanent 550. */
  readonly refuse: Set<string>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Resolves when `n` messages in all have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
}

export const SMTP_USER = 'relay-user';
export const SMTP_PASSWORD = 'relay password 123';

export async function startSmtp(): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const refuse = new Set<string>();
  let server: SMTPServer | null = null;
  let port = 0;

  const make = () =>
    new SMTPServer({
      // STARTTLS would need a certificate; the tests check the protocol, not TLS.
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, cb) {
        if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) cb(null, { user: auth.username });
        else cb(new Error('Invalid username or password'));
      },
      onRcptTo(address, _session, cb) {
        if (refuse.has(address.address)) {
          const err = new Error('No such user here') as Error & { responseCode: number };
          err.responseCode = 550;
          return cb(err);
        }
        cb();
      },
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          simpleParser(raw)
            .then((parsed) => {
              received.push({ raw, parsed, rcptTo: session.envelope.rcptTo.map((r) => r.address) });
              cb();
            })
            .catch(cb);
        });
      },
    });

  const start = async () => {
    server = make();
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server.server.address() as AddressInfo).port;
  };
  await start();

  return {
    get port() {
      return port;
    },
    get url() {
      return `smtp://127.0.0.1:${port}`;
    },
    received,
    refuse,
    start,
    async stop() {
      const s = server;
      server = null;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async waitFor(n, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} messages, got ${received.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
  };
}
