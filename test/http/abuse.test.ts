// No single request may stall the service: each route's worst known requests (every string field at
// its largest accepted size, filled with what has made matchers and regexes slow, and the whole
// requests that once took seconds: bench/abuse-cases.ts) must each cost under 200 ms of CPU. The
// app runs in this process, so process.cpuUsage() around a request counts all its work, worker
// threads included; CPU time, unlike wall time, does not grow on a busy machine.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { RouteOptions } from 'fastify';
import { abuseCases, routeKey, siteCredentials, slashPageHtml, type AbuseRequest, type RouteInfo, type Target } from '../../bench/abuse-cases.js';
import { passwordProblem } from '../../src/domain/passwords.js';
import { runDueDiscoveries } from '../../src/services/discovery.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { addLocalService } from '../site/helpers.js';
import { startServer, type LocalServer } from '../verification/servers.js';

const CPU_LIMIT_MS = 200;

/**
 * One request through node:http, its body written as it is: the client shares this process, so its
 * CPU is counted too, and fetch's copying and streaming of a 5 MB body cost as much again as the
 * server's handling of it.
 */
function send(url: string, req: AbuseRequest): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(url, { method: req.method, headers: req.headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      res.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(
      req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength),
    );
  });
}

/**
 * A request over the limit is tried twice more and judged by its cheapest try: the process's CPU
 * also counts what the request did not cause (a full collection of the garbage every earlier request
 * left, which a 5 MB upload's buffers can set off; code compiled on its first run; time a busy host's
 * hypervisor charges to the guest), and that does not come back on every try, where a request's own
 * unbounded work does. A try counts only if it was answered as the first was: a repeated request
 * that takes a cheaper path (an account that now exists) proves nothing.
 */
async function cheapestTry<T extends { ms: number; status: number }>(measure: () => Promise<T>): Promise<T> {
  let result = await measure();
  for (let retry = 0; retry < 2 && result.ms > CPU_LIMIT_MS; retry++) {
    const again = await measure();
    if (again.status === result.status && again.ms < result.ms) result = again;
  }
  return result;
}

let t: TestApp;
let pages: LocalServer;
const routes: RouteInfo[] = [];
let target: Target;

before(async () => {
  const collect = (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      if (method !== 'GET' && method !== 'POST') continue;
      routes.push({ method, url: route.url, schema: route.schema as RouteInfo['schema'] });
    }
  };
  t = await startTestApp(
    {
      TRUST_PROXY: '1',
      RATE_LIMIT_PER_ADDRESS: '100000000',
      RATE_LIMIT_PER_KEY: '100000000',
      RATE_LIMIT_PER_KEY_UNPROVEN: '100000000',
      SITE_READS_PER_ADDRESS: '100000000',
    },
    { onRoute: collect },
  );
  const html = slashPageHtml();
  pages = await startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  // The strength thread starts once per process (loading zxcvbn's dictionaries): not a request's cost.
  await passwordProblem('warming up the thread');
  const partner = await t.partner();
  const user = { userId: 'abuse_target', email: 'abuse.target@example.org', password: 'teapot dormouse riddle' };
  await t.user({ ...user, optedIn: true });
  target = {
    baseUrl: t.baseUrl,
    apiKey: partner.apiKey,
    apiToken: partner.apiToken,
    user,
    slashPage: `${pages.origin}/me`,
    ...(await siteCredentials(t.baseUrl, user)),
  };
});
after(async () => {
  await pages?.close();
  await t?.close();
});

test('no request to any route costs more than 200 ms of CPU, worst cases included', async () => {
  const cases = abuseCases(routes);
  const covered = new Set(cases.map((c) => c.route));
  assert.deepEqual(
    routes.map(routeKey).filter((k) => !covered.has(k)),
    [],
    'every route has cases',
  );
  assert.ok(routes.length > 40, `${routes.length} routes seen`);

  const measure = async (c: (typeof cases)[number]) => {
    // Past every per-minute limit and log-in throttle window of the case before: the worst case is
    // the request that does the work, not its cheap 429.
    t.clock.advance(16 * 60 * 1000);
    const req = c.build(target);
    const before = process.cpuUsage();
    const res = await send(target.baseUrl + req.path, req);
    // "Find my identities" fetches in the background job; its run is part of this request's cost.
    if (c.route === 'POST /account/discover') await runDueDiscoveries(t.ctx, 1);
    const used = process.cpuUsage(before);
    c.answered?.(target, res.status, req);
    return { route: c.route, label: c.label, ms: (used.user + used.system) / 1000, status: res.status };
  };
  const results: { route: string; label: string; ms: number; status: number }[] = [];
  for (const c of cases) results.push(await cheapestTry(() => measure(c)));

  const failed = results.filter((r) => r.status >= 500);
  assert.deepEqual(failed, [], 'no worst case is a server error');
  const slow = results.filter((r) => r.ms > CPU_LIMIT_MS).sort((a, b) => b.ms - a.ms);
  const worst = [...results].sort((a, b) => b.ms - a.ms).slice(0, 5);
  process.stdout.write(
    `# ${results.length} requests to ${routes.length} routes; the costliest:\n${worst.map((r) => `#   ${r.ms.toFixed(0)} ms  ${r.route}  (${r.label}) → ${r.status}`).join('\n')}\n`,
  );
  assert.deepEqual(
    slow.map((r) => `${r.route} (${r.label}): ${r.ms.toFixed(0)} ms`),
    [],
    `requests over ${CPU_LIMIT_MS} ms of CPU`,
  );
  const errors = t.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
  assert.deepEqual(
    errors.map((l) => l.slice(0, 300)),
    [],
    'nothing logged at error level',
  );
});

test('"Verify now" on a page whose rel="me" link is 40,000 slashes costs under 200 ms of CPU', async () => {
  // The same normalisation runs in the daily re-check; through the route it is the user's to trigger.
  await addLocalService(t, 'slashsite', 'Slash site', pages.origin);
  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    redirect: 'manual' as const,
    headers: { cookie: target.session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: target.session.csrf, ...fields }).toString(),
  });
  const added = await fetch(`${t.baseUrl}/account/identities`, form({ svc_id: 'slashsite', usr_svc_id: 'me' }));
  assert.equal(added.status, 303, await added.text());
  const verify = async () => {
    // Past the throttle on checking again: each try does the whole check.
    t.clock.advance(16 * 60 * 1000);
    const fetched = pages.requests.length;
    const before = process.cpuUsage();
    const res = await fetch(`${t.baseUrl}/account/identities/verify`, form({ svc_id: 'slashsite' }));
    await res.arrayBuffer();
    const used = process.cpuUsage(before);
    assert.ok(pages.requests.length > fetched, 'the page was fetched');
    return { ms: (used.user + used.system) / 1000, status: res.status };
  };
  const result = await cheapestTry(verify);
  assert.equal(result.status, 303);
  assert.ok(result.ms < CPU_LIMIT_MS, `${result.ms} ms of CPU`);
});
