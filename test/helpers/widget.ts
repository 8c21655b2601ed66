// The widget's scripts run the way a page runs them: what a boot script hands to the bundle, and
// what an error script reports.
import assert from 'node:assert/strict';
import vm from 'node:vm';
import type { WidgetBootConfig } from '../../src/widget/boot-script.js';

/** Runs a boot script the way a page would and returns what it handed to the bundle. */
export function bootConfig(js: string): WidgetBootConfig {
  const loaded: { src?: string }[] = [];
  const window: Record<string, unknown> = {};
  const document = { currentScript: null, createElement: () => ({}), head: { appendChild: (s: { src?: string }) => loaded.push(s) } };
  vm.runInNewContext(js, { window, document });
  const queue = window.__idsvc_widget_queue as { config: WidgetBootConfig }[];
  assert.equal(queue.length, 1);
  assert.equal(loaded[0]?.src, queue[0]!.config.bundleUrl);
  return JSON.parse(JSON.stringify(queue[0]!.config)) as WidgetBootConfig; // out of the sandbox's realm
}

/** Fetches what should be an error script: checks its status and headers, returns the one line it reports. */
export async function widgetError(baseUrl: string, pathAndQuery: string, status: number, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${baseUrl}${pathAndQuery}`, { headers });
  const body = await res.text();
  assert.equal(res.status, status, body);
  assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.equal(res.headers.get('cache-control'), 'private, no-store');
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  const lines: string[] = [];
  vm.runInNewContext(body, { console: { error: (...a: unknown[]) => lines.push(a.join(' ')) } });
  assert.equal(lines.length, 1);
  return lines[0]!;
}
