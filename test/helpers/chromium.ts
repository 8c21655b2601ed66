// The one way browser tests start Chromium: Debian's real browser, headless, with nothing that
// reaches outside this machine (no background networking, updates or sync).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

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

/**
 * A full-page screenshot into SITE_SCREENSHOTS_DIR, for a person to look at, or nothing when it is
 * not set: encoding full pages as PNG is much of a browser file's CPU, and a test run reads none.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.SITE_SCREENSHOTS_DIR;
  if (!dir) return;
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, name), fullPage: true });
}
