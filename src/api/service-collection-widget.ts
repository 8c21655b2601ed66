// SPEC §4.4, §7: the per-user script a partner page embeds. It carries this person's identities as
// the request may see them and hands them to the static, long-cached widget bundle.
import { Type } from '@sinclair/typebox';
import { ApiError, errors } from '../domain/errors.js';
import type { ParsedIdentifier } from '../domain/identifiers.js';
import { apiOperation, type ApiCall } from '../http/api-route.js';
import type { Doc } from '../http/document.js';
import { requestOrigin, unvalidatedField, unvalidatedString } from '../http/request-info.js';
import { allowedOrigins } from '../repositories/partners.js';
import { entryUrl, type PrivateAccess, type ViewEntry } from '../services/partner-data.js';
import { widgetBundle, type WidgetManifest } from '../widget/bundle.js';
import { renderWidgetBootScriptWith, servicesJson, type WidgetBootConfig, type WidgetService } from '../widget/boot-script.js';
import { KeptBootScript } from '../widget/kept-boot-script.js';
import { bundleUrl, catalogueUrl, signUpUrl } from '../widget/routes.js';
import { checkWidgetSignature } from '../widget/signature.js';
import { cachedView } from './cached-views.js';
import { privateAccessOf, userIdentifierOf } from './shared.js';

const LANG = /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8}){0,4}$/;

function displaySyncOf(raw: string | undefined): boolean {
  const v = (raw ?? '').trim().toUpperCase();
  if (v === 'TRUE') return true;
  if (v === 'FALSE') return false;
  throw errors.invalidRequest('display_sync must be TRUE or FALSE');
}

/**
 * A partner that lists origins gets its widget only on them. authorise() already refuses another
 * origin; here a request that names none is refused too, because every browser sends a Referer
 * with a <script src> unless the page opted out, and a page on another origin could opt out only
 * to slip past the list (SPEC §5; docs/widget.md says how a partner page keeps its Referer).
 */
function requireNamedOrigin(call: ApiCall): void {
  if (allowedOrigins(call.partner).length > 0 && requestOrigin(call.request) === null) {
    throw errors.forbidden(
      'This partner allows its widget only on listed origins, and the request named none (no Referer or Origin header; see the Referrer-Policy notes in docs/widget.md)',
    );
  }
}

/** The services of nobody to show. */
const NO_SERVICES = servicesJson([]);

/** Everything in a boot script but the services. */
type BootConfig = Omit<WidgetBootConfig, 'services'>;

/** The person's services as the boot script carries them (servicesJson), or a whole script the answer cache keeps. */
type Prefill = string | KeptBootScript;

/**
 * The person's services (servicesJson), or the whole script when the answer cache keeps it: it is
 * then rendered once, for this request, and later ones like it are answered with its bytes.
 * Unknown or hidden people get an empty widget (a newcomer can start adding), like anyone with
 * nothing to show. At once, not as a promise, when the answer is kept in memory.
 */
function prefill(call: ApiCall, id: ParsedIdentifier, access: PrivateAccess | null, boot: BootRequest): Prefill | Promise<Prefill> {
  const view = access ? { view: 'private' as const, access } : { view: 'public' as const, reader: call.reader };
  let services: Prefill | Promise<Prefill>;
  try {
    services = cachedView(call.ctx, 'widget', id, view, 'without-evidence', (entries, kept): Prefill => {
      const json = servicesJson(entries.map(widgetService));
      return kept && boot.renderedFor !== null ? KeptBootScript.render(boot.config, boot.renderedFor, json) : json;
    });
  } catch (err) {
    return emptyWhenNotFound(err);
  }
  return services instanceof Promise ? services.catch(emptyWhenNotFound) : services;
}

function emptyWhenNotFound(err: unknown): string {
  if (err instanceof ApiError && err.code === 'not_found') return NO_SERVICES;
  throw err;
}

/** What the request asked for, read from its path and query. */
interface WidgetAsked {
  displaySync: boolean;
  access: PrivateAccess | null;
  lang: string;
}

/** This request's boot script but its services, and what tells it apart from others' (null: never kept, it carries a warning). */
interface BootRequest {
  config: BootConfig;
  renderedFor: string | null;
}

function bootRequest(call: ApiCall, asked: WidgetAsked, manifest: WidgetManifest): BootRequest {
  const { displaySync, access } = asked;
  const signature = call.urlProof ?? { status: 'unsigned' };
  const config: BootConfig = {
    apiBase: call.ctx.config.baseUrl,
    apiKey: call.partner.api_key,
    userIdentifier: call.params.user_identifier ?? '',
    displaySync,
    lang: LANG.test(asked.lang) ? asked.lang : 'en',
    view: access ? 'private' : 'public',
    warning: signature.status === 'invalid' && !access ? signature.warning : null,
    siteName: call.ctx.config.siteName,
    signUpUrl: signUpUrl(call.ctx),
    catalogueUrl: catalogueUrl(call.ctx),
    bundleUrl: bundleUrl(call.ctx, manifest.file),
  };
  // What differs between requests for one cached answer (the service's own settings are one per
  // process); the path's spelling last, as the only part that may hold a space.
  const renderedFor =
    config.warning === null ? `${config.apiKey} ${config.view} ${displaySync ? 1 : 0} ${config.lang} ${manifest.file} ${config.userIdentifier}` : null;
  return { config, renderedFor };
}

/** The per-user script, sent here: the operation is `raw` (its Doc says nothing). */
function sendBootScript(call: ApiCall, boot: BootRequest, prefilled: Prefill): Doc {
  const script =
    typeof prefilled === 'string'
      ? renderWidgetBootScriptWith(boot.config, prefilled)
      : prefilled.renderedFor === boot.renderedFor
        ? prefilled.bytes
        : renderWidgetBootScriptWith(boot.config, prefilled.services);
  call.reply
    .type('text/javascript; charset=utf-8')
    .header('Cache-Control', 'private, no-store')
    .header('Cross-Origin-Resource-Policy', 'cross-origin')
    .send(script);
  return { root: 'script', text: '' };
}

function widgetService(e: ViewEntry): WidgetService {
  return {
    svcId: e.svc.svcId,
    svcName: e.svc.svcName,
    usrSvcId: e.showUsrSvcId ? e.usrSvcId : null,
    url: entryUrl(e),
    verified: e.verified,
    svcFavicon: e.svc.svcFavicon,
  };
}

export const serviceCollectionWidget = apiOperation({
  operationId: 'service_collection_widget',
  summary: 'The embeddable widget for one person (JavaScript)',
  description:
    'Answers JavaScript, also for errors (a script that reports the error with console.error). Unsigned, it is pre-filled with the public view; with `exp` and `sig` (hex HMAC-SHA256 over "{api_key}:{user_identifier}:{exp}", keyed with the lowercase hex SHA-256 of the api_token) with the partner\'s private view. An invalid or expired signature, or an `exp` more than 24 hours ahead, falls back to the public view with a console warning. Unsigned (the api_key alone), the public view carries no usrSvcId, whoever the key belongs to. `lang`: en (default), de, fr or es. Never stored by shared caches.',
  paths: ['/api/service_collection_widget/:api_key/:user_identifier/:display_sync'],
  query: {
    lang: Type.Optional(Type.String({ maxLength: 64, description: 'Language of the widget (BCP 47), e.g. `de`; English when unknown.' })),
    exp: Type.Optional(Type.String({ maxLength: 32, description: 'Signed URLs: expiry, in Unix seconds.' })),
    sig: Type.Optional(Type.String({ maxLength: 128, description: 'Signed URLs: the signature (see the description).' })),
  },
  tokenRequired: false,
  answer: 'javascript',
  documented: { method: 'GET' },
  example: { params: { api_key: '$API_KEY', user_identifier: 'alice', display_sync: 'FALSE' }, query: { lang: 'de' } },
  kind: 'widget',
  raw: true,
  urlProof(partner, request, nowMs) {
    // Before the schemas: exp or sig given twice arrive as arrays, which the check calls invalid.
    const { query, params } = request;
    return checkWidgetSignature(
      partner,
      unvalidatedString(params, 'user_identifier') ?? '',
      unvalidatedField(query, 'exp'),
      unvalidatedField(query, 'sig'),
      nowMs,
    );
  },
  handler(call) {
    const displaySync = displaySyncOf(call.params.display_sync);
    const id = userIdentifierOf(call);
    requireNamedOrigin(call);
    // A valid signature (checked by apiRoute, before the limits), the api_token in a POST body, or
    // a partner that chose legacy open reads: the private view. Anything else: the public view,
    // without a single usrSvcId from the central repository.
    const access = privateAccessOf(call);
    const asked: WidgetAsked = { displaySync, access, lang: call.query.lang?.trim() ?? '' };
    // Sent at once when the bundle's manifest (read once per process) and the answer are in memory
    // (http/api-route.ts), after them otherwise.
    const manifest = widgetBundle.current();
    const answer = (m: WidgetManifest) => {
      const boot = bootRequest(call, asked, m);
      const prefilled = prefill(call, id, access, boot);
      return prefilled instanceof Promise ? prefilled.then((p) => sendBootScript(call, boot, p)) : sendBootScript(call, boot, prefilled);
    };
    return manifest instanceof Promise ? manifest.then(answer) : answer(manifest);
  },
});
