// rel="me" backlink verification (SPEC §10): an identity is verified when the page at its URL links
// back to the user's public profile with rel="me".
import { Parser } from 'htmlparser2';
import LinkHeader from 'http-link-header';
import { withoutTrailingSlashes } from '../domain/slashes.js';
import { retryAfterMs, type Fetcher } from './polite-fetch.js';
import { safeFetch } from './safe-fetch.js';
import type { SafeFetchFailureReason } from './safe-fetch.js';

function relHasMe(rel: string | undefined): boolean {
  if (!rel) return false;
  return rel.split(/[\t\n\f\r ]+/).some((token) => token.toLowerCase() === 'me');
}

function resolve(href: string, base: string): string | null {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return null;
  }
}

/**
 * Absolute URLs of the page's rel="me" links: `<a>` and `<link>` elements (resolved against the
 * first `<base href>`, else baseUrl) and `Link:` header entries (resolved against baseUrl, the
 * URL the response came from). In document order, header entries last, without duplicates.
 */
export function findRelMeLinks(html: string, baseUrl: string, linkHeader?: string | null): string[] {
  const rawHrefs: string[] = [];
  let baseHref: string | null = null;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        // Only the first <base> with an href counts, and it applies to links before it too.
        if (name === 'base' && baseHref === null && attribs.href !== undefined) baseHref = attribs.href;
        if ((name === 'a' || name === 'link') && attribs.href !== undefined && relHasMe(attribs.rel)) {
          rawHrefs.push(attribs.href);
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();

  const documentBase = (baseHref !== null ? resolve(baseHref, baseUrl) : null) ?? baseUrl;
  const found: string[] = [];
  for (const href of rawHrefs) {
    const abs = resolve(href, documentBase);
    if (abs !== null) found.push(abs);
  }

  if (linkHeader) {
    try {
      for (const ref of LinkHeader.parse(linkHeader).refs) {
        // An anchor makes the link about another resource, not about this page.
        if (ref.anchor !== undefined && ref.anchor !== '') continue;
        if (!relHasMe(ref.rel)) continue;
        const abs = resolve(ref.uri, baseUrl);
        if (abs !== null) found.push(abs);
      }
    } catch {
      // A malformed header is the page owner's problem; the HTML links still count.
    }
  }
  return [...new Set(found)];
}

/**
 * The form profile URLs are compared in: scheme and host lower-cased, default port, user info,
 * fragment and trailing slashes dropped; path and query kept as they are.
 * Returns the input unchanged when it is not a URL, so it simply never matches.
 */
export function normaliseProfileUrl(u: string): string {
  let url: URL;
  try {
    url = new URL(u.trim());
  } catch {
    return u;
  }
  // URL already lower-cases scheme and host and drops the scheme's default port.
  if (url.host === '') {
    const hash = url.href.indexOf('#');
    return hash === -1 ? url.href : url.href.slice(0, hash);
  }
  return `${url.protocol}//${url.host}${withoutTrailingSlashes(url.pathname)}${url.search}`;
}

export type RelMeOutcome = 'verified' | 'unreachable' | 'no_link' | 'link_elsewhere';

export interface RelMeResult {
  outcome: RelMeOutcome;
  /** Plain English for the user, e.g. "HTTP 404" or "no rel=\"me\" link found on the page". */
  detail: string;
  /** Why the page was unreachable: the fetch failure, or 'http_status' for a non-2xx answer. */
  reason?: SafeFetchFailureReason | 'http_status';
  /** HTTP status of the final response, when there was one. */
  status?: number;
  /** When the host asked us to wait (Retry-After) or the request was deferred: how long. */
  retryAfterMs?: number;
}

export interface CheckRelMeOptions {
  allowPrivate: boolean;
  /** Normalised URLs of other pages proven to be the user's: a link to one proves the page too. */
  alsoAccepted?: readonly string[];
  /** Swaps the fetcher (the polite one of a verification check, or a test's); defaults to safeFetch. */
  fetchImpl?: Fetcher;
}

const UNREACHABLE_TEXT: Record<SafeFetchFailureReason, string> = {
  invalid_url: 'the address is not a valid URL',
  scheme_not_allowed: 'only http and https addresses can be checked',
  port_not_allowed: 'only addresses on ports 80 and 443 can be checked',
  address_not_allowed: 'the address resolves to a private network',
  dns_failed: 'the host name could not be found',
  too_many_redirects: 'the page redirects more than 3 times',
  timeout: 'the page did not answer within 10 seconds',
  connect_failed: 'could not connect to the server',
  http_error: 'the server sent an invalid response',
  deferred: 'not asked now: the site asked us to wait, or had its share of requests this minute',
};

const HTML_TYPES = ['text/html', 'application/xhtml+xml'];

/** Checks whether the page at identityUrl links back to profileUrl with rel="me". Never throws. */
export async function checkRelMe(identityUrl: string, profileUrl: string, opts: CheckRelMeOptions): Promise<RelMeResult> {
  const fetcher = opts.fetchImpl ?? safeFetch;
  let res: Awaited<ReturnType<typeof safeFetch>>;
  try {
    res = await fetcher(identityUrl, {
      allowPrivate: opts.allowPrivate,
      method: 'GET',
      headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1' },
    });
  } catch {
    // safeFetch does not throw; a substituted fetcher might.
    return { outcome: 'unreachable', reason: 'connect_failed', detail: UNREACHABLE_TEXT.connect_failed };
  }
  if (!res.ok) {
    return {
      outcome: 'unreachable',
      reason: res.reason,
      detail: UNREACHABLE_TEXT[res.reason],
      ...(res.retryAfterMs !== undefined ? { retryAfterMs: res.retryAfterMs } : {}),
    };
  }
  if (res.status < 200 || res.status > 299) {
    const wait = res.status === 429 || res.status === 503 ? retryAfterMs(res.headers['retry-after'], Date.now()) : null;
    return {
      outcome: 'unreachable',
      reason: 'http_status',
      status: res.status,
      detail: `HTTP ${res.status}`,
      ...(wait !== null ? { retryAfterMs: wait } : {}),
    };
  }

  // Only markup is parsed as markup: a text/plain or JSON page that merely quotes `<a rel="me">`
  // (a paste, an API answer echoing user input) must not verify anything.
  const contentType = (res.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const isHtml = contentType === '' || HTML_TYPES.includes(contentType);
  const links = findRelMeLinks(isHtml ? res.body : '', res.finalUrl, res.headers.link ?? null);

  if (links.length === 0) {
    return { outcome: 'no_link', status: res.status, detail: 'no rel="me" link found on the page' };
  }
  const wanted = normaliseProfileUrl(profileUrl);
  if (links.some((l) => normaliseProfileUrl(l) === wanted)) {
    return { outcome: 'verified', status: res.status, detail: `rel="me" link to ${profileUrl} found` };
  }
  const alsoAccepted = new Set(opts.alsoAccepted ?? []);
  const viaPage = links.find((l) => alsoAccepted.has(normaliseProfileUrl(l)));
  if (viaPage !== undefined) {
    return { outcome: 'verified', status: res.status, detail: `rel="me" link to ${viaPage}, a page already proven yours, found` };
  }
  const shown = links.slice(0, 3).join(', ');
  const more = links.length > 3 ? ` and ${links.length - 3} more` : '';
  return {
    outcome: 'link_elsewhere',
    status: res.status,
    detail: `rel="me" links point elsewhere: ${shown}${more}`,
  };
}
