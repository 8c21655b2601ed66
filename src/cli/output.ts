import type { Env } from '../config.js';

/**
 * What one run of `idsvc` reads and writes: the process's own streams and environment when run as
 * a command (main.ts), or strings when a caller runs it in process (program.ts, `runIdsvc`).
 */
export interface CliIo {
  readonly env: Env;
  /** Standard input, whole; throws a CliError when there is none to read (a terminal). */
  readonly stdin: () => Promise<string>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/** One run: where it writes, whether --json was given, and the exit code it ends with. */
export interface Out extends CliIo {
  readonly json: boolean;
  exitCode: number;
}

/** Prints JSON with --json, otherwise the plain-text rendering. */
export function print(out: Out, value: unknown, text: () => string): void {
  out.stdout(out.json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

/** Reports a failed command the way every command does: a line on stderr (JSON with --json), exit 1. */
export function fail(out: Out, message: string): void {
  out.stderr(out.json ? `${JSON.stringify({ error: message })}\n` : `idsvc: ${message}\n`);
  out.exitCode = 1;
}

export class CliError extends Error {}

/** The password and other secrets come through standard input, never the command line; a trailing newline is not part of them. */
export async function readStdin(out: Out): Promise<string> {
  return (await out.stdin()).replace(/\r?\n$/, '');
}

/** The process's own standard streams and environment, for the `idsvc` command itself. */
export function processIo(): CliIo {
  return {
    env: process.env,
    async stdin() {
      if (process.stdin.isTTY) throw new CliError('the password is read from standard input: pipe it in, e.g. `printf %s "$PW" | idsvc user create …`');
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  };
}
