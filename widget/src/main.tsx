import { render } from 'preact';
import { css } from './styles.js';
import { handleSyncResults } from './SyncForm.js';
import type { WidgetBootConfig } from './types.js';
import { Widget } from './Widget.js';

/** What each boot script pushes (src/widget/boot-script.ts). */
interface QueueItem {
  config: WidgetBootConfig;
  script: HTMLScriptElement | null;
}

const QUEUE = '__idsvc_widget_queue';
const CONTAINER_ID = 'idsvc-widget';

const claimed = new WeakSet<Element>();
let sheet: CSSStyleSheet | null = null;
let mounted = 0;

function addStyles(root: ShadowRoot) {
  try {
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(css);
    }
    root.adoptedStyleSheets = [sheet];
  } catch {
    // Older browsers: a <style> element (subject to a page CSP's style-src, unlike the above).
    const style = document.createElement('style');
    style.textContent = css;
    root.appendChild(style);
  }
}

/** The page's own placeholder(s) come first; a page may have one per widget. */
function freeContainer(): Element | null {
  const all = document.querySelectorAll(`#${CONTAINER_ID}`);
  for (let i = 0; i < all.length; i++) {
    const el = all[i] as Element;
    if (!claimed.has(el)) return el;
  }
  return null;
}

function mount({ config, script }: QueueItem) {
  if (config.warning) console.warn(`idsvc widget: ${config.warning}`);
  const host = document.createElement('idsvc-widget');
  const container = freeContainer();
  if (container) {
    claimed.add(container);
    container.textContent = '';
    container.appendChild(host);
  } else if (script?.parentNode && document.body?.contains(script)) {
    script.parentNode.insertBefore(host, script.nextSibling);
  } else {
    (document.body || document.documentElement).appendChild(host);
  }
  const shadow = host.attachShadow({ mode: 'open' });
  addStyles(shadow);
  const app = document.createElement('div');
  shadow.appendChild(app);
  render(<Widget config={config} idp={`w${++mounted}-`} />, app);
}

function schedule(item: QueueItem) {
  const run = () => {
    try {
      if (!item?.config || typeof item.config !== 'object') throw new Error('bad queue item');
      mount(item);
    } catch (err) {
      console.error('idsvc widget: could not render', err);
    }
  };
  // The bundle may arrive while the page is still parsing: wait so a placeholder below the script exists.
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run);
  else run();
}

function start() {
  const w = window as unknown as Record<string, unknown>;
  const existing = w[QUEUE] as { idsvc?: boolean } | unknown[] | undefined;
  if (existing && !Array.isArray(existing) && existing.idsvc) return; // this bundle already runs here
  const pending = Array.isArray(existing) ? (existing as QueueItem[]) : [];
  w[QUEUE] = {
    idsvc: true,
    push(...items: QueueItem[]) {
      items.forEach(schedule);
      return 0;
    },
  };
  window.handle_sync_results_idsvc = handleSyncResults;
  pending.forEach(schedule);
}

start();
