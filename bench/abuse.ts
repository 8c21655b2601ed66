// `npm run abuse`: starts the service (bench/abuse-server.ts, its own process), sends every route
// its worst known requests (bench/abuse-cases.ts) while /healthz is asked every few milliseconds on
// a connection of its own, and prints, per route, the longest /healthz took while that route's
// requests were running: how long one request can keep the event loop from anything else. The
// goal is at most 50 ms (docs/performance.md). Not a test: on a busy machine the numbers rise.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { abuseCases, siteCredentials, slashPageHtml, type RouteInfo, type Target } from './abuse-cases.js';

const PROBE_EVERY_MS = 5;
const GOAL_MS = 50;

const server = spawn(process.execPath, ['--import', 'tsx', new URL('./abuse-server.ts', import.meta.url).pathname], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: process.env,
});
const first = await new Promise<string>((resolve, reject) => {
  createInterface({ input: server.stdout! }).once('line', resolve);
  server.once('exit', (code) => reject(new Error(`the server stopped before it was ready (exit ${code})`)));
});
const ready = JSON.parse(first) as { baseUrl: string; apiKey: string; apiToken: string; user: Target['user']; routes: RouteInfo[] };

// The remote profile page with a rel="me" link of 40,000 slashes, served from here.
const html = slashPageHtml();
const pages = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(html);
});
await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
const pagesPort = (pages.address() as { port: number }).port;

const target: Target = {
  baseUrl: ready.baseUrl,
  apiKey: ready.apiKey,
  apiToken: ready.apiToken,
  user: ready.user,
  slashPage: `http://127.0.0.1:${pagesPort}/me`,
  ...(await siteCredentials(ready.baseUrl, ready.user)),
};

// One kept-alive connection for the probe, so a connection set-up is never what is measured.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function probeOnce(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(`${target.baseUrl}/healthz`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - started));
      })
      .on('error', reject);
  });
}

let worstSinceReset = 0;
let probing = true;
const prober = (async () => {
  while (probing) {
    worstSinceReset = Math.max(worstSinceReset, await probeOnce());
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
  }
})();

const cases = abuseCases(ready.routes);
// One plain request to each route first, unmeasured: the first call of anything compiles code and
// fills caches once per process, which is not what one request costs.
for (const c of cases.filter((c) => c.label === 'plain')) {
  const req = c.build(target);
  await (
    await fetch(target.baseUrl + req.path, {
      method: req.method,
      headers: req.headers,
      redirect: 'manual',
      ...(req.body !== undefined ? { body: req.body } : {}),
    })
  ).arrayBuffer();
}

// The idle baseline: what a probe costs when nothing else runs.
worstSinceReset = 0;
await new Promise((r) => setTimeout(r, 500));
const idle = worstSinceReset;

const worst = new Map<string, { ms: number; label: string }>();
for (const c of cases) {
  worstSinceReset = 0;
  const req = c.build(target);
  const res = await fetch(target.baseUrl + req.path, {
    method: req.method,
    headers: req.headers,
    redirect: 'manual',
    ...(req.body !== undefined ? { body: req.body } : {}),
  });
  await res.arrayBuffer();
  c.answered?.(target, res.status, req);
  // "Find my identities" runs in the background job, right after the answer: wait for it.
  if (c.route === 'POST /account/discover') await waitForDiscovery();
  // The probe in flight when the answer came may still be waiting behind the work.
  await new Promise((r) => setTimeout(r, 4 * PROBE_EVERY_MS));
  const seen = worst.get(c.route);
  if (!seen || worstSinceReset > seen.ms) worst.set(c.route, { ms: worstSinceReset, label: c.label });
}

async function waitForDiscovery(): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const status = await fetch(`${target.baseUrl}/account/discover/status`, { headers: { cookie: target.session.cookie } });
    const body = (await status.json()) as { status: string };
    if (body.status === 'done' || body.status === 'none') return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

probing = false;
await prober;
agent.destroy();
pages.close();
server.kill('SIGTERM');

const rows = [...worst].sort((a, b) => b[1].ms - a[1].ms);
const width = Math.max(...rows.map(([route]) => route.length));
process.stdout.write(`Longest /healthz answer while each route's worst requests ran (idle: ${idle.toFixed(1)} ms; goal ≤ ${GOAL_MS} ms)\n\n`);
for (const [route, { ms, label }] of rows) {
  process.stdout.write(`${ms > GOAL_MS ? '!' : ' '} ${route.padEnd(width)}  ${ms.toFixed(1).padStart(7)} ms  (${label})\n`);
}
const over = rows.filter(([, { ms }]) => ms > GOAL_MS).length;
process.stdout.write(`\n${rows.length} routes, ${over} over ${GOAL_MS} ms\n`);
process.exitCode = over > 0 ? 1 : 0;
