// `npm run example -- --demo`: an idsvc in this same process, on a fresh SQLite database in a
// temporary directory, with a partner for the example site (its webhook endpoint set to the site's
// receiver) and an idsvc account to sync with.
// This file stands in for a real idsvc; it is not part of what a partner copies.
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildWidget } from '../../scripts/build-widget.js';
import { loadConfig } from '../../src/config.js';
import { hashPassword } from '../../src/domain/passwords.js';
import { createPartner } from '../../src/repositories/partners.js';
import { createUser } from '../../src/services/orphan-subjects.js';
import { startServer } from '../../src/server.js';

export const DEMO_ACCOUNT = { email: 'alice@example.com', userId: 'alice', password: 'correct horse battery staple' } as const;

export interface DemoIdsvc {
  url: string;
  apiKey: string;
  apiToken: string;
  webhookSecret: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export async function startDemoIdsvc(siteOrigins: string[], webhookUrl: string, port?: number): Promise<DemoIdsvc> {
  await buildWidget(); // the current widget source, whatever was built before
  const dir = mkdtempSync(path.join(os.tmpdir(), 'idsvc-example-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const config = loadConfig({
    DATABASE_URL: `sqlite:${path.join(dir, 'idsvc.sqlite')}`,
    HOST: '127.0.0.1',
    PORT: String(port ?? (await freePort())),
    LOG_LEVEL: 'warn',
    // Webhook delivery runs, to the example site on this machine: a real idsvc refuses private addresses.
    FETCH_ALLOW_PRIVATE: '1',
  });
  const server = await startServer(config);
  const now = server.ctx.clock.now();
  // Allowed origins on: the widget renders only on the example site's own pages.
  const { apiKey, apiToken, partner } = await server.ctx.db.write((w) =>
    createPartner(w, { name: 'Example partner site', origins: siteOrigins, webhookUrl }, now),
  );
  await createUser(
    server.ctx.db,
    {
      email: DEMO_ACCOUNT.email,
      userId: DEMO_ACCOUNT.userId,
      passwordHash: await hashPassword(DEMO_ACCOUNT.password, config.argon2Cost),
      optedIn: true,
      proven: true,
    },
    now,
  );
  return { url: server.url, apiKey, apiToken, webhookSecret: partner.webhook_secret ?? '', stop: server.stop };
}
