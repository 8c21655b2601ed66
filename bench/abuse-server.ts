// The service that `npm run abuse` (bench/abuse.ts) attacks, in a process of its own so that the
// attacker's work never shows up as the server's: a real app on a fresh SQLite database (or
// DATABASE_URL), with a partner and a proven account, background jobs on. It prints one JSON line
// (address, keys, the account, the routes with their schemas) and serves until killed.
import type { RouteOptions } from 'fastify';
import type { RouteInfo } from './abuse-cases.js';
import { startTestApp } from '../test/helpers/app.js';

const routes: RouteInfo[] = [];
const t = await startTestApp(
  {
    BACKGROUND_JOBS: '1',
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '1',
    RATE_LIMIT_PER_ADDRESS: '100000000',
    RATE_LIMIT_PER_KEY: '100000000',
    RATE_LIMIT_PER_KEY_UNPROVEN: '100000000',
    SITE_READS_PER_ADDRESS: '100000000',
  },
  {
    onRoute: (route: RouteOptions) => {
      for (const method of [route.method].flat()) {
        if (method === 'GET' || method === 'POST') routes.push({ method, url: route.url, schema: route.schema as RouteInfo['schema'] });
      }
    },
  },
);
const partner = await t.partner();
const user = { userId: 'abuse_target', email: 'abuse.target@example.org', password: 'teapot dormouse riddle' };
await t.user({ ...user, optedIn: true });
// The app's clock is the test helper's manual one: moved on a minute every second, so per-minute
// throttles on the one account let later requests do their work again, without making every
// background job due at every turn.
setInterval(() => t.clock.advance(60_000), 1000).unref();
process.stdout.write(`${JSON.stringify({ baseUrl: t.baseUrl, apiKey: partner.apiKey, apiToken: partner.apiToken, user, routes })}\n`);

const stop = () => {
  t.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
