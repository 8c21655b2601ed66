// Sends an exact number of requests from a pool file (bench/requests.ts), a few at a time over
// kept-alive connections, and waits for every answer: a measure that counts work per request
// (bench/instructions.sh) needs a known count, which wrk's timed runs do not give.
//
//   node --import tsx bench/send.ts PORT POOL_FILE FROM COUNT [CONCURRENCY]
//
// Requests FROM .. FROM + COUNT - 1 of the pool, wrapping around; a failed request (an error, or an
// answer of 400 or more) fails the run, as in every other measurement.
import fs from 'node:fs';
import http from 'node:http';

interface PoolLine {
  method: string;
  path: string;
  body: string;
}

export function readPool(file: string): PoolLine[] {
  const lines: PoolLine[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const [method, path, body = ''] = line.split('\t');
    if (method && path) lines.push({ method, path, body });
  }
  if (lines.length === 0) throw new Error(`empty request pool ${file}`);
  return lines;
}

export async function send(port: number, pool: readonly PoolLine[], from: number, count: number, concurrency: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  let next = from;
  const end = from + count;
  const one = (r: PoolLine) =>
    new Promise<void>((resolve, reject) => {
      const headers: Record<string, string | number> = r.body
        ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(r.body) }
        : {};
      const req = http.request({ host: '127.0.0.1', port, method: r.method, path: r.path, agent, headers }, (res) => {
        res.resume();
        res.on('end', () => ((res.statusCode ?? 500) >= 400 ? reject(new Error(`${r.method} ${r.path.slice(0, 40)}… answered ${res.statusCode}`)) : resolve()));
      });
      req.on('error', reject);
      req.end(r.body || undefined);
    });
  let failed = false;
  const worker = async () => {
    try {
      while (next < end && !failed) await one(pool[next++ % pool.length]!);
    } catch (e) {
      // The other workers stop at their next request: the run has failed.
      failed = true;
      throw e;
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
}

if (process.argv[1] === import.meta.filename) {
  const [port, file, from, count, concurrency = '4'] = process.argv.slice(2);
  const numbers = [port, from, count, concurrency].map(Number);
  if (!file || numbers.some((n) => !Number.isInteger(n) || n < 0) || numbers[3] === 0) {
    console.error('usage: bench/send.ts PORT POOL_FILE FROM COUNT [CONCURRENCY] (whole numbers, CONCURRENCY at least 1)');
    process.exit(2);
  }
  await send(numbers[0]!, readPool(file), numbers[1]!, numbers[2]!, numbers[3]!);
}
