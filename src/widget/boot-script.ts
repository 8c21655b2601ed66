/**
 * The per-user script answered by `GET /api/service_collection_widget/...` (SPEC §4.4, §7).
 *
 * It is tiny on purpose: it carries only this request's data and hands it to the static,
 * long-cached widget bundle. The bundle is loaded once per page, however many widgets the page has.
 * The types below are also the widget's view of its configuration (widget/src imports them).
 */

export interface WidgetService {
  svcId: string;
  svcName: string;
  usrSvcId: string | null;
  url: string;
  verified: boolean;
  svcFavicon: string;
}

export interface WidgetBootConfig {
  /** The service's BASE_URL, e.g. "http://127.0.0.1:8080". */
  apiBase: string;
  apiKey: string;
  /** Exactly as given in the URL path; handed back to the page's callbacks unchanged. */
  userIdentifier: string;
  displaySync: boolean;
  /** "en" by default; the widget speaks en, de, fr and es and falls back to en. */
  lang: string;
  /** Which view the pre-filled services are. */
  view: 'public' | 'private';
  /** When set, the widget reports it once with console.warn (e.g. a signature that fell back to public). */
  warning: string | null;
  /** Pre-filled identities, already sorted. */
  services: WidgetService[];
  /** The service's name (SITE_NAME), so the widget can say whose account it syncs with. */
  siteName: string;
  /** Absolute URL of the service's sign-up page, offered to people who have no account yet. */
  signUpUrl: string;
  /** Absolute URL of the catalogue as a JSON array (served with CORS `*`), in "combined" order. */
  catalogueUrl: string;
  /** Absolute URL of the versioned widget bundle. */
  bundleUrl: string;
}

/** The page-global queue the boot scripts push to and the bundle drains (then replaces). */
export const WIDGET_QUEUE_GLOBAL = '__idsvc_widget_queue';

const UNSAFE_IN_SCRIPT = /[<>&\u2028\u2029]/g;

/**
 * JSON that can sit anywhere inside a `<script>` (inline or external): no value can close the
 * element, open an HTML comment or break a line in older JavaScript engines. These characters only
 * ever occur inside JSON strings, where the `\uXXXX` escape means the same thing.
 */
export function scriptSafeJson(value: unknown): string {
  const json = JSON.stringify(value) ?? 'null';
  return json.replace(UNSAFE_IN_SCRIPT, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function renderWidgetBootScript(config: WidgetBootConfig): string {
  const { services, ...rest } = config;
  return renderWidgetBootScriptWith(rest, servicesJson(services));
}

/** No services: one string for every person without any, not one each for the answer cache to keep. */
const NO_SERVICES = '[]';

/** The services as the boot script carries them: script-safe JSON, made once for an answer the answer cache keeps. */
export function servicesJson(services: readonly WidgetService[]): string {
  return services.length === 0 ? NO_SERVICES : scriptSafeJson(services);
}

/**
 * The boot script of `config` with its services given as servicesJson() made them: a person's
 * services are rendered and escaped once while the answer cache keeps them, not at every request.
 */
export function renderWidgetBootScriptWith(config: Omit<WidgetBootConfig, 'services'>, services: string): string {
  const [before, after] = bootScriptAround(config);
  return before + services + after;
}

// The first boot script on a page creates the queue and loads the bundle; later ones only push.
// Once loaded, the bundle swaps the array for an object whose push() renders at once.
const BOOT_SCRIPT_END =
  '};' +
  `var d=document,s=d.currentScript,q=window.${WIDGET_QUEUE_GLOBAL},first=!q||typeof q.push!=="function";` +
  `if(first)q=window.${WIDGET_QUEUE_GLOBAL}=[];` +
  'q.push({config:c,script:s});' +
  'if(first){var b=d.createElement("script");b.src=c.bundleUrl;b.async=true;' +
  'if(s&&s.nonce)b.nonce=s.nonce;' +
  '(d.head||d.documentElement).appendChild(b);}' +
  '})();\n';

/**
 * The boot script of `config` before and after its services (servicesJson()): the script is
 * `before + services + after`, so a kept script can give its services back (KeptBootScript).
 */
export function bootScriptAround(config: Omit<WidgetBootConfig, 'services'>): [before: string, after: string] {
  // An object's JSON ends with its closing brace: the services go in as its last member.
  return [`(function(){"use strict";var c=${scriptSafeJson(config).slice(0, -1)},"services":`, BOOT_SCRIPT_END];
}

export function renderWidgetErrorScript(code: string, message: string): string {
  return (
    '(function(){' +
    `var c=${scriptSafeJson(code)},m=${scriptSafeJson(message)};` +
    'if(typeof console!=="undefined"&&console.error)console.error("idsvc widget: "+c+": "+m);' +
    '})();\n'
  );
}
