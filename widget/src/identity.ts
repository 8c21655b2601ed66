import { patternAdvice, examplePassing } from '../../src/catalogue/pattern-text.js';
import { buildProfileUrl, matchesPattern as fitsPattern } from '../../src/catalogue/profile-url.js';
import type { CatalogueEntry } from './types.js';

/** Only these schemes ever become links or image sources. */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The profile URL an identifier gives on a service, or null when it cannot give one. The server's own
 * builder, bundled here, so the preview is exactly the URL the server will answer with.
 */
export function profileUrl(entry: CatalogueEntry, identifier: string): string | null {
  return buildProfileUrl(entry, identifier.trim()) || null;
}

/** The identifier behind a profile URL, when the URL is the service's template filled in. */
export function identifierFromUrl(entry: CatalogueEntry, url: string): string {
  if (entry.urlBuilder === 'mastodon') {
    const m = /^https?:\/\/([^/]+)\/@([^/?#]+)\/?$/.exec(url);
    return m ? `${m[2] as string}@${m[1] as string}` : '';
  }
  // A website's identifier is its address.
  if (entry.urlBuilder === 'website') return url;
  const { svcLeftURL: left, svcRightURL: right } = entry;
  if (!left || url.length <= left.length + right.length) return '';
  if (!url.startsWith(left) || !url.endsWith(right)) return '';
  const middle = url.slice(left.length, url.length - right.length);
  try {
    return decodeURIComponent(middle);
  } catch {
    return middle;
  }
}

/** false only when the catalogue has a pattern and the identifier fails it. */
export function matchesPattern(entry: CatalogueEntry, identifier: string): boolean {
  return fitsPattern(entry.regexCheck, identifier.trim());
}

export type IdentifierProblem = 'required' | 'tooLong' | 'invalid' | 'mastodonFormat' | 'websiteFormat' | 'pattern';

/** What blocks saving (mirrors the server's rules for usrSvcId, SPEC §4.3). */
export function identifierProblem(entry: CatalogueEntry, identifier: string): IdentifierProblem | null {
  const id = identifier.trim();
  if (!id) return 'required';
  if (id.length > 255) return 'tooLong';
  if (/[\u0000-\u001f\u007f]/.test(id)) return 'invalid';
  // A service without a template (an operator's entry for a site with no public pages) gives no URL.
  const templated = entry.urlBuilder !== null || entry.svcLeftURL !== '';
  if (templated && profileUrl(entry, id) === null) {
    if (entry.urlBuilder === 'mastodon') return 'mastodonFormat';
    return entry.urlBuilder === 'website' ? 'websiteFormat' : 'invalid';
  }
  // The server refuses what the service's pattern refuses, so saving it here would only fail there.
  if (!matchesPattern(entry, id)) return 'pattern';
  return null;
}

/**
 * What a name must look like on the service: the pattern in words (English only, as the sentence is
 * built in English), else an example name the pattern accepts, else nothing.
 */
export function patternHelp(entry: CatalogueEntry, lang: string, exampleText: string): string {
  if (entry.regexCheck === null) return '';
  if (lang === 'en') return patternAdvice(entry.regexCheck, entry.svcName);
  const example = examplePassing(entry.regexCheck);
  return example === null ? '' : exampleText.replace('{example}', example);
}

const catalogues = new Map<string, Promise<CatalogueEntry[]>>();

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function toEntry(raw: unknown): CatalogueEntry | null {
  if (!raw || typeof raw !== 'object') return null;
  const r = raw as Record<string, unknown>;
  const svcId = text(r.svcId);
  const svcName = text(r.svcName);
  if (!svcId || !svcName) return null;
  return {
    svcId,
    svcName,
    svcLeftURL: text(r.svcLeftURL),
    svcRightURL: text(r.svcRightURL),
    regexCheck: text(r.regexCheck) || null,
    urlBuilder: text(r.urlBuilder) || null,
    svcFavicon: text(r.svcFavicon),
  };
}

/** One request per catalogue URL and page, shared by every widget on it; a failure may be retried. */
export function loadCatalogue(url: string): Promise<CatalogueEntry[]> {
  let pending = catalogues.get(url);
  if (!pending) {
    pending = fetch(url, { credentials: 'omit' })
      .then((res) => {
        if (!res.ok) throw new Error(`catalogue: HTTP ${res.status}`);
        return res.json() as Promise<unknown>;
      })
      .then((body) => {
        if (!Array.isArray(body)) throw new Error('catalogue: not an array');
        return body.map(toEntry).filter((e): e is CatalogueEntry => e !== null);
      });
    pending.catch(() => catalogues.delete(url));
    catalogues.set(url, pending);
  }
  return pending;
}

function fold(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
}

/** Names that start with the query first, then names that contain it; each in catalogue order. */
export function filterCatalogue(entries: CatalogueEntry[], query: string): CatalogueEntry[] {
  const q = fold(query.trim());
  if (!q) return entries;
  const starts: CatalogueEntry[] = [];
  const contains: CatalogueEntry[] = [];
  for (const e of entries) {
    const name = fold(e.svcName);
    if (name.startsWith(q)) starts.push(e);
    else if (name.includes(q) || e.svcId.includes(q)) contains.push(e);
  }
  return starts.concat(contains);
}
