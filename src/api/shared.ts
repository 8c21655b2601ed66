// Pieces several operations share: parsing path values, and presenting identities.
import { Type } from '@sinclair/typebox';
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import type { AppContext } from '../context.js';
import { errors } from '../domain/errors.js';
import { parseUserIdentifier, type ParsedIdentifier } from '../domain/identifiers.js';
import type { ApiCall, NoFields } from '../http/api-route.js';
import { PROLOG, xmlField, type Fields } from '../http/document.js';
import { entryUrl, type PrivateAccess, type ViewEntry } from '../services/partner-data.js';

export function userIdentifierOf(call: Pick<ApiCall, 'params'>): ParsedIdentifier {
  const raw = call.params.user_identifier;
  if (raw === undefined || raw === '') throw errors.invalidRequest('user_identifier is missing');
  return parseUserIdentifier(raw);
}

export type ProfileType = 'public' | 'private';

export const profileTypeQuery = {
  profile_type: Type.Optional(Type.String({ description: '`public` or `private` (default `private`); may also be the last path segment.' })),
};

/** profile_type from the path or the query (SPEC §4.1); the path wins when both are given. */
export function profileTypeOf(call: Pick<ApiCall<NoFields, typeof profileTypeQuery>, 'params' | 'query'>): ProfileType {
  const raw = call.params.profile_type ?? call.query.profile_type ?? 'private';
  const v = raw.trim().toLowerCase();
  if (v !== 'public' && v !== 'private') throw errors.invalidRequest('profile_type must be public or private');
  return v;
}

/**
 * The `cache` of an operation with views: only a call for the public view may be kept by a shared
 * cache. Without proof, a legacy_open_reads partner's private view is served too, and is no less
 * private for it.
 */
export const asksForPublicView = (call: Pick<ApiCall<NoFields, typeof profileTypeQuery>, 'params' | 'query'>): boolean => profileTypeOf(call) === 'public';

/** SPEC §3 rule 0 and §4.1: the private view needs proof, unless the partner chose legacy open reads; null when neither. */
export function privateAccessOf(call: ApiCall): PrivateAccess | null {
  if (call.reader !== 'anyone') return call.reader;
  return call.partner.legacy_open_reads ? { partner: call.partner, by: 'legacy_open_reads' } : null;
}

/** privateAccessOf, or the error that says how to get the private view. */
export function requirePrivateAccess(call: ApiCall): PrivateAccess {
  const access = privateAccessOf(call);
  if (!access) throw errors.invalidApiToken('The private view needs your api_token in the POST body (server-side calls only); or ask for profile_type=public');
  return access;
}

export async function serviceOf(ctx: AppContext, svcId: string | undefined): Promise<CatalogueEntry> {
  const snap = await ctx.catalogue.get();
  const svc = svcId === undefined ? undefined : snap.byId.get(svcId.trim().toLowerCase());
  if (!svc) throw errors.serviceNotFound();
  return svc;
}

/** One entry of an answer. Two literal shapes rather than a spread: this runs for every entry of every answer. */
function userServiceFieldsXml(e: ViewEntry): Fields {
  const verified = e.verified;
  return e.showUsrSvcId
    ? { svcId: e.svc.svcId, svcName: e.svc.svcName, usrSvcId: e.usrSvcId, url: entryUrl(e), verified, svcFavicon: e.svc.svcFavicon }
    : { svcId: e.svc.svcId, svcName: e.svc.svcName, url: entryUrl(e), verified, svcFavicon: e.svc.svcFavicon };
}

/**
 * return_services' list of UserService entries as XML, written straight from the view's entries: byte for byte what
 * render() makes of userServiceFieldsXml's fields (test/http/document.test.ts), without a Fields
 * object per entry and the list around them, which a miss would build only to walk once.
 */
export function userServicesXml(entries: readonly ViewEntry[]): string {
  if (entries.length === 0) return `${PROLOG}<services/>\n`;
  let out = `${PROLOG}<services>`;
  for (const e of entries) {
    out += '<service>';
    out += xmlField('svcId', e.svc.svcId);
    out += xmlField('svcName', e.svc.svcName);
    if (e.showUsrSvcId) out += xmlField('usrSvcId', e.usrSvcId);
    out += xmlField('url', entryUrl(e));
    out += e.verified ? '<verified>TRUE</verified>' : '<verified>FALSE</verified>';
    out += xmlField('svcFavicon', e.svc.svcFavicon);
    out += '</service>';
  }
  return `${out}</services>\n`;
}

/**
 * JSON answers add the evidence of a verified entry after the fields XML has (docs/spec.md,
 * "Evidence of verification"); XML answers stay exactly what existing DandyID clients parse.
 */
function userServiceFieldsJson(e: ViewEntry): Fields {
  const fields = userServiceFieldsXml(e);
  return e.evidence ? { ...fields, ...e.evidence } : fields;
}

export function userServiceFieldsFor(format: 'xml' | 'json'): (e: ViewEntry) => Fields {
  return format === 'json' ? userServiceFieldsJson : userServiceFieldsXml;
}

export function profileUrl(ctx: AppContext, userId: string): string {
  return `${ctx.config.baseUrl}/u/${userId}`;
}
