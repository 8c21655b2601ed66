// Reads the catalogue's URL templates backwards: a pasted profile URL names a
// service and the identifier on it, or nothing. Kept free of Node imports so the widget bundles the
// same code and fills in exactly what the server would.
//
// What is ignored when comparing a URL with a template, so that the addresses people copy from a
// browser still match:
// - the scheme (http or https), the host's case, a default port;
// - one leading `www.`, `m.` or `mobile.` on the service's host (its desktop and mobile addresses);
// - trailing slashes, the fragment, and the query string (except, for a template whose identifier
//   sits in the query, that one parameter);
// - the case of the template's literal path (`/Users/` and `/users/` are one page on nearly every
//   site); the identifier keeps the case it was given, except in a host name, where case means nothing.
// `@user` forms: a template ending in `@` (`https://medium.com/@{}`) reads `https://medium.com/@neil`
// as `neil`, and any `https://{instance}/@{user}` that no more specific template claims is read as
// the Mastodon handle `user@instance`.
//
// Asked to (`orWebsite`: the "paste your profile address" of the site and the widget, where a
// person gives their own address), a URL that no template and no Fediverse profile explains is
// offered as the person's own website (the `website` URL builder, when the catalogue has it
// enabled), unless its host is one of the catalogue's own services (`https://github.com/` without
// a name is a mistake, not a homepage). That is the last resort, so a known service always wins;
// only what the builder accepts (https) is offered. A partner's push or a discovery walk does not
// ask: for them an address that fits no service is none.
//
// When several templates match, the most specific wins: the one with the most literal characters
// (host and path around the identifier); a builder such as Mastodon's, which matches any host, is
// the least specific. When the most specific match is shared by two services (two catalogue entries
// with the same template), the answer is `ambiguous` with both, never a guess.
import { withoutTrailingSlashes } from '../domain/slashes.js';
import { buildProfileUrl, type ProfileUrlTemplate } from './profile-url.js';

export interface ReverseTemplateEntry extends ProfileUrlTemplate {
  svcId: string;
}

export interface ProfileUrlCandidate {
  svcId: string;
  usrSvcId: string;
}

export type ProfileUrlMatch = { kind: 'match'; svcId: string; usrSvcId: string } | { kind: 'ambiguous'; candidates: ProfileUrlCandidate[] } | { kind: 'none' };

/** Longest input read; a profile URL is far shorter, and anything longer is not worth parsing. */
const MAX_INPUT_LENGTH = 2048;
const PLACEHOLDER = 'idsvcplaceholder0';
const HOST_VARIANTS = /^(?:www|m|mobile)\./;
/** Subdomains that name a service's own pages, never a user's. */
const NOT_A_USER_LABEL = new Set(['www', 'm', 'mobile']);

interface CompiledTemplate {
  entry: ReverseTemplateEntry;
  position: 'path' | 'host' | 'query';
  /** path and query: the host without its www./m. variant; host: the suffix after the identifier, e.g. `.blogspot.com`. */
  host: string;
  /** Lower-cased literal path before and after the identifier (path position), or the whole path. */
  before: string;
  after: string;
  /** query position: the parameter that carries the identifier. */
  param: string;
  specificity: number;
}

interface CompiledList {
  templates: CompiledTemplate[];
  /** The hosts the templates name (without www./m.), which are never a person's own website. */
  serviceHosts: Set<string>;
}

const compiledLists = new WeakMap<readonly ReverseTemplateEntry[], CompiledList>();

function compileAll(entries: readonly ReverseTemplateEntry[]): CompiledList {
  const known = compiledLists.get(entries);
  if (known) return known;
  const templates: CompiledTemplate[] = [];
  const serviceHosts = new Set<string>();
  for (const entry of entries) {
    const c = compile(entry);
    if (!c) continue;
    templates.push(c);
    serviceHosts.add(c.position === 'host' ? c.host.slice(1) : c.host);
  }
  const list = { templates, serviceHosts };
  compiledLists.set(entries, list);
  return list;
}

function compile(entry: ReverseTemplateEntry): CompiledTemplate | null {
  if (entry.urlBuilder !== null || entry.svcLeftURL === '') return null;
  let url: URL;
  try {
    url = new URL(`${entry.svcLeftURL}${PLACEHOLDER}${entry.svcRightURL}`);
  } catch {
    return null;
  }
  const base = { entry, before: '', after: '', param: '' };
  if (url.hostname.includes(PLACEHOLDER)) {
    const [label, ...rest] = url.hostname.split('.');
    if (label !== PLACEHOLDER || rest.length === 0) return null;
    const suffix = `.${rest.join('.')}`;
    const path = withoutTrailingSlashes(url.pathname).toLowerCase();
    return { ...base, position: 'host', host: suffix, before: path, specificity: suffix.length + path.length };
  }
  const host = url.host.replace(HOST_VARIANTS, '');
  const at = url.pathname.indexOf(PLACEHOLDER);
  if (at >= 0) {
    const before = url.pathname.slice(0, at).toLowerCase();
    const after = withoutTrailingSlashes(url.pathname.slice(at + PLACEHOLDER.length)).toLowerCase();
    return { ...base, position: 'path', host, before, after, specificity: host.length + before.length + after.length };
  }
  for (const [name, value] of url.searchParams) {
    if (value !== PLACEHOLDER) continue;
    const path = withoutTrailingSlashes(url.pathname).toLowerCase();
    return { ...base, position: 'query', host, before: path, param: name, specificity: host.length + path.length + name.length };
  }
  return null;
}

function parseInput(input: string): URL | null {
  const text = input.trim();
  if (text === '' || text.length > MAX_INPUT_LENGTH) return null;
  // People paste `github.com/neil` as often as the full address.
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(text) && !/^[^/:]+:\d/.test(text) ? text : `https://${text}`;
  try {
    const url = new URL(withScheme);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

function decode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function readIdentifier(t: CompiledTemplate, url: URL): string | null {
  const path = withoutTrailingSlashes(url.pathname);
  if (t.position === 'host') {
    const host = url.hostname;
    if (!host.endsWith(t.host) || path.toLowerCase() !== t.before) return null;
    const label = host.slice(0, -t.host.length);
    return label === '' || NOT_A_USER_LABEL.has(label) ? null : label;
  }
  if (url.host.replace(HOST_VARIANTS, '') !== t.host) return null;
  if (t.position === 'query') {
    if (path.toLowerCase() !== t.before) return null;
    const value = url.searchParams.get(t.param);
    return value === null || value.trim() === '' ? null : value;
  }
  const lower = path.toLowerCase();
  if (lower.length <= t.before.length + t.after.length || !lower.startsWith(t.before) || !lower.endsWith(t.after)) return null;
  const middle = path.slice(t.before.length, path.length - t.after.length);
  if (middle.includes('/')) return null;
  return decode(middle);
}

// Mastodon and the rest of the Fediverse put profiles at https://{instance}/@{user}.
const FEDIVERSE_PROFILE = /^\/@([A-Za-z0-9_]+)$/;

function readFediverseHandle(url: URL): string | null {
  const m = FEDIVERSE_PROFILE.exec(withoutTrailingSlashes(url.pathname));
  return m ? `${m[1]}@${url.hostname}` : null;
}

/**
 * Which catalogue service and identifier a profile URL names. `entries` should be the enabled
 * catalogue; compiled templates are cached per array, so pass the same array while it is current.
 * `orWebsite` offers an address no service explains as the person's website (above).
 */
export function matchProfileUrl(entries: readonly ReverseTemplateEntry[], input: string, options: { orWebsite?: boolean } = {}): ProfileUrlMatch {
  const url = parseInput(input);
  if (!url) return { kind: 'none' };
  let best: { specificity: number; candidates: ProfileUrlCandidate[] } = { specificity: -1, candidates: [] };
  const compiled = compileAll(entries);
  for (const t of compiled.templates) {
    if (t.specificity < best.specificity) continue;
    const usrSvcId = readIdentifier(t, url);
    // An identifier that does not build an address again is not one the service could have issued.
    if (usrSvcId === null || buildProfileUrl(t.entry, usrSvcId) === '') continue;
    const candidate = { svcId: t.entry.svcId, usrSvcId };
    if (t.specificity > best.specificity) best = { specificity: t.specificity, candidates: [candidate] };
    else best.candidates.push(candidate);
  }
  if (best.candidates.length === 0) {
    const handle = readFediverseHandle(url);
    const builder = handle ? entries.find((e) => e.urlBuilder === 'mastodon') : undefined;
    if (handle && builder && buildProfileUrl(builder, handle) !== '') return { kind: 'match', svcId: builder.svcId, usrSvcId: handle };
    return options.orWebsite ? asWebsite(entries, compiled.serviceHosts, url) : { kind: 'none' };
  }
  if (best.candidates.length === 1) {
    const [only] = best.candidates as [ProfileUrlCandidate];
    return { kind: 'match', svcId: only.svcId, usrSvcId: only.usrSvcId };
  }
  return { kind: 'ambiguous', candidates: best.candidates };
}

function asWebsite(entries: readonly ReverseTemplateEntry[], serviceHosts: Set<string>, url: URL): ProfileUrlMatch {
  const website = entries.find((e) => e.urlBuilder === 'website');
  if (!website || serviceHosts.has(url.host.replace(HOST_VARIANTS, ''))) return { kind: 'none' };
  // The parsed URL (an `http:` one is refused by the builder), so what is offered is what was pasted.
  const usrSvcId = buildProfileUrl(website, url.href);
  return usrSvcId === '' ? { kind: 'none' } : { kind: 'match', svcId: website.svcId, usrSvcId };
}
