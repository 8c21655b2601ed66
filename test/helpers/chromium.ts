// The one way browser tests start Chromium: Debian's real browser, headless, with nothing that
// reaches outside this machine (no background networking, updates or sync).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM), `Chromium is needed at ${CHROMIUM} (Debian package "chromium")`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
