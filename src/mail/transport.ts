// Where a message goes once the mail job picks it: an SMTP relay (SMTP_URL), or, by default, an
// .eml file under MAIL_DIR that any mail program opens and a person can read as text (the text
// part in 8bit). Both build the MIME message with nodemailer.
import fs from 'node:fs/promises';
import path from 'node:path';
import type Nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import addressparser from 'nodemailer/lib/addressparser';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import type StreamTransport from 'nodemailer/lib/stream-transport';
import type { Config } from '../config.js';

export interface OutgoingMessage {
  /** The left part of the Message-ID; the domain of MAIL_FROM is added. */
  messageId: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Delivery {
  /** The .eml file written, when mail goes to files. */
  file?: string;
}

export interface MailTransport {
  /** 'smtp' or 'file', for the logs and the docs. */
  readonly kind: 'smtp' | 'file';
  send(message: OutgoingMessage): Promise<Delivery>;
  close(): void;
}

/** Each SMTP step gives up well within the mail job's lease, so no other instance re-sends meanwhile. */
export const SMTP_TIMEOUT_MS = 30_000;

function mailOptions(config: Config, m: OutgoingMessage) {
  const from = addressparser(config.mailFrom, { flatten: true })[0]?.address ?? '';
  return {
    from: config.mailFrom,
    to: m.to,
    subject: m.subject,
    text: m.text,
    html: m.html,
    messageId: `<${m.messageId}@${from.slice(from.lastIndexOf('@') + 1)}>`,
    // RFC 3834: no vacation replies or other auto-answers to a machine's message.
    headers: { 'Auto-Submitted': 'auto-generated' },
  };
}

// nodemailer is loaded with the first message, not at start-up: most starts (each CLI command, a
// server with nothing to mail yet) send none, and loading it costs more than the rest of mail.
let nodemailerModule: Promise<typeof Nodemailer> | undefined;
// Its default export is what the static import gives; the types of a dynamic import differ.
const nodemailer = () => (nodemailerModule ??= import('nodemailer').then((m) => m.default as typeof Nodemailer));

/** A transporter made at the first message; closing before it is made closes nothing. */
function onFirstSend<T extends Transporter<unknown>>(make: (n: typeof Nodemailer) => T): { get(): Promise<T>; close(): void } {
  let made: Promise<T> | undefined;
  return {
    get: () => (made ??= nodemailer().then(make)),
    close: () =>
      void made?.then(
        (t) => t.close(),
        () => {},
      ),
  };
}

function smtpTransport(config: Config, smtpUrl: string): MailTransport {
  const transporter = onFirstSend(
    (n): Transporter<SMTPTransport.SentMessageInfo> =>
      n.createTransport({
        url: smtpUrl,
        ...(config.smtpUser && config.smtpPassword !== null ? { auth: { user: config.smtpUser, pass: config.smtpPassword } } : {}),
        connectionTimeout: SMTP_TIMEOUT_MS,
        greetingTimeout: SMTP_TIMEOUT_MS,
        socketTimeout: SMTP_TIMEOUT_MS,
      }),
  );
  return {
    kind: 'smtp',
    async send(m) {
      await (await transporter.get()).sendMail(mailOptions(config, m));
      return {};
    },
    close: transporter.close,
  };
}

/** RFC 5322's limit on a line, in octets, without its line break. */
const MAX_LINE_OCTETS = 998;

/**
 * A file's message as a person reads it in a text editor: the plain-text part unencoded (8bit), so
 * a link copied from the raw file works, where quoted-printable would split it with `=` and write
 * `=` as `=3D`. The HTML part is base64 (its lines are long). A text with a line too long for 8bit
 * falls back to base64 too, which mail programs decode alike.
 */
function fileMailOptions(config: Config, m: OutgoingMessage) {
  const text = m.text.replace(/\r\n?/g, '\n');
  const fits = text.split('\n').every((line) => Buffer.byteLength(line) <= MAX_LINE_OCTETS);
  return {
    ...mailOptions(config, m),
    textEncoding: 'base64' as const,
    ...(fits ? { text: { raw: `Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${text}` } } : {}),
  };
}

function fileTransport(config: Config): MailTransport {
  const transporter = onFirstSend(
    (n): Transporter<StreamTransport.SentMessageInfo> => n.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }),
  );
  let counter = 0;
  return {
    kind: 'file',
    async send(m) {
      const info = await (await transporter.get()).sendMail(fileMailOptions(config, m));
      // Only the owner may read them: the messages hold single-use links.
      await fs.mkdir(config.mailDir, { recursive: true, mode: 0o700 });
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const file = path.join(config.mailDir, `${stamp}-${process.pid}-${++counter}.eml`);
      await fs.writeFile(file, info.message as Buffer, { mode: 0o600, flag: 'wx' });
      return { file };
    },
    close: transporter.close,
  };
}

export function createMailTransport(config: Config): MailTransport {
  return config.smtpUrl ? smtpTransport(config, config.smtpUrl) : fileTransport(config);
}
