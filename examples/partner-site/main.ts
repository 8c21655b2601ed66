// Starts the example partner site (site.ts) against an idsvc:
//   IDSVC_URL=… IDSVC_API_KEY=… IDSVC_API_TOKEN=… [IDSVC_WEBHOOK_SECRET=…] npm run example     an idsvc you run
//   npm run example -- --demo                                          a throwaway idsvc in-process
// EXAMPLE_PORT (default 3000) is the site's port.
import { createPartnerSite } from './site.js';

const HOST = '127.0.0.1';
const port = Number(process.env.EXAMPLE_PORT ?? 3000);
const demo = process.argv.includes('--demo');
const user = { name: 'Alice Example', email: 'alice@example.com' };

let idsvc: { url: string; apiKey: string; apiToken: string; webhookSecret?: string };
if (demo) {
  const { startDemoIdsvc, DEMO_ACCOUNT } = await import('./demo.js');
  idsvc = await startDemoIdsvc([`http://${HOST}:${port}`, `http://localhost:${port}`], `http://${HOST}:${port}/idsvc/webhooks`);
  console.log(`Demo idsvc: ${idsvc.url} (a fresh database, gone when you stop this)`);
  console.log(`  Its sync form accepts ${DEMO_ACCOUNT.email} / ${DEMO_ACCOUNT.password}`);
} else {
  const { IDSVC_URL, IDSVC_API_KEY, IDSVC_API_TOKEN, IDSVC_WEBHOOK_SECRET } = process.env;
  if (!IDSVC_URL || !IDSVC_API_KEY || !IDSVC_API_TOKEN) {
    console.error(
      [
        'The example partner site needs an idsvc to talk to. Either:',
        '',
        '  npm run example -- --demo',
        '      starts a throwaway idsvc in this process and uses it; or',
        '',
        '  IDSVC_URL=http://127.0.0.1:8080 IDSVC_API_KEY=<api_key> IDSVC_API_TOKEN=<api_token> npm run example',
        "      uses an idsvc you run (`npm start` writes a demo partner's keys to data/demo-partner.json on first start;",
        '      `npm run idsvc -- partner create --name "My site" --origin http://127.0.0.1:3000` makes another).',
        '      IDSVC_WEBHOOK_SECRET=whsec_… as well shows its webhook events on /events.',
        '',
        'See docs/partner-quickstart.md.',
      ].join('\n'),
    );
    process.exit(1);
  }
  idsvc = { url: IDSVC_URL, apiKey: IDSVC_API_KEY, apiToken: IDSVC_API_TOKEN, ...(IDSVC_WEBHOOK_SECRET ? { webhookSecret: IDSVC_WEBHOOK_SECRET } : {}) };
}

const site = createPartnerSite({
  idsvcUrl: idsvc.url,
  apiKey: idsvc.apiKey,
  apiToken: idsvc.apiToken,
  user,
  ...(idsvc.webhookSecret ? { webhookSecret: idsvc.webhookSecret } : {}),
});
site.once('error', (err: NodeJS.ErrnoException) => {
  console.error(err.code === 'EADDRINUSE' ? `Port ${port} is taken: set EXAMPLE_PORT to another.` : err);
  process.exit(1);
});
site.listen(port, HOST, () => {
  console.log(`Example partner site: http://${HOST}:${port}/  (signed in as ${user.name} <${user.email}>)`);
  console.log(`  Webhook events: http://${HOST}:${port}/events${idsvc.webhookSecret ? '' : ' (set IDSVC_WEBHOOK_SECRET to receive them)'}`);
  console.log('Stop with Ctrl+C.');
});
