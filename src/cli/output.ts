export interface Out {
  json: boolean;
}

/** Prints JSON with --json, otherwise the plain-text rendering. */
export function print(out: Out, value: unknown, text: () => string): void {
  process.stdout.write(out.json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

export class CliError extends Error {}

export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new CliError('the password is read from standard input: pipe it in, e.g. `printf %s "$PW" | idsvc user create …`');
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}
