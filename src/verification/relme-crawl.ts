// Breadth-first walk of rel="me" links from one page the user controls. Every
// fetch goes through the SSRF-safe fetcher under SPEC §10's limits (3 redirects, 1 MiB, 10 s),
// and the walk as a whole is bounded in depth, pages and time, so a loop or a huge web of links
// ends quickly. What the pages are, and which link back, is decided by the caller.
import { findRelMeLinks, normaliseProfileUrl } from './relme.js';
import { safeFetch } from './safe-fetch.js';

export const CRAWL_LIMITS = { maxDepth: 2, maxPages: 25, totalMs: 30_000, perFetchMs: 10_000 } as const;

export interface CrawledPage {
  url: string;
  /** Where the page was read from after redirects; null when it was not fetched. */
  finalUrl: string | null;
  depth: number;
  viaUrl: string | null;
  fetched: boolean;
  outcome: 'fetched' | 'unreachable' | 'not_fetched';
  detail: string;
  /** Its rel="me" links, absolute (empty when not fetched). */
  links: string[];
}

export interface CrawlOptions {
  allowPrivate: boolean;
  /** URLs never fetched, compared normalised: the user's own profile page on this service. */
  skip: ReadonlySet<string>;
  /** Called after each fetch, so progress can be stored while the walk goes on. */
  onPage(page: CrawledPage): Promise<void>;
  limits?: Partial<typeof CRAWL_LIMITS>;
  fetchImpl?: typeof safeFetch;
}

export interface CrawlResult {
  pages: CrawledPage[];
  /** Pages found but not fetched because a limit was reached (already passed to onPage). */
  stoppedBy: 'page_limit' | 'time_limit' | null;
}

const HTML_TYPES = ['', 'text/html', 'application/xhtml+xml'];

export async function crawlRelMe(startUrl: string, opts: CrawlOptions): Promise<CrawlResult> {
  const limits = { ...CRAWL_LIMITS, ...opts.limits };
  const fetcher = opts.fetchImpl ?? safeFetch;
  // Wall-clock time, not the app's clock: this bounds real work.
  const deadline = performance.now() + limits.totalMs;
  const seen = new Set<string>([normaliseProfileUrl(startUrl)]);
  const queue: { url: string; depth: number; viaUrl: string | null }[] = [{ url: startUrl, depth: 0, viaUrl: null }];
  const pages: CrawledPage[] = [];
  let stoppedBy: CrawlResult['stoppedBy'] = null;
  let fetchedCount = 0;

  for (let next = queue.shift(); next; next = queue.shift()) {
    const remaining = deadline - performance.now();
    const limitHit = fetchedCount >= limits.maxPages ? 'page_limit' : remaining <= 0 ? 'time_limit' : null;
    if (limitHit || opts.skip.has(normaliseProfileUrl(next.url))) {
      if (limitHit) stoppedBy ??= limitHit;
      const page: CrawledPage = {
        ...next,
        finalUrl: null,
        fetched: false,
        outcome: 'not_fetched',
        detail: limitHit
          ? `not fetched: the ${limitHit === 'page_limit' ? `${limits.maxPages}-page` : 'time'} limit was reached`
          : 'your profile on this service',
        links: [],
      };
      pages.push(page);
      await opts.onPage(page);
      continue;
    }
    fetchedCount++;
    const res = await fetcher(next.url, {
      allowPrivate: opts.allowPrivate,
      method: 'GET',
      timeoutMs: Math.min(limits.perFetchMs, remaining),
      headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1' },
    });
    let page: CrawledPage;
    if (!res.ok) {
      page = { ...next, finalUrl: null, fetched: true, outcome: 'unreachable', detail: res.detail, links: [] };
    } else if (res.status < 200 || res.status > 299) {
      page = { ...next, finalUrl: res.finalUrl, fetched: true, outcome: 'unreachable', detail: `HTTP ${res.status}`, links: [] };
    } else {
      const contentType = (res.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      const links = findRelMeLinks(HTML_TYPES.includes(contentType) ? res.body : '', res.finalUrl, res.headers.link ?? null);
      const notes = [`${links.length} rel="me" link${links.length === 1 ? '' : 's'}`];
      if (res.redirects > 0) notes.push(`redirected to ${res.finalUrl}`);
      if (res.truncated) notes.push('only the first 1 MiB was read');
      page = { ...next, finalUrl: res.finalUrl, fetched: true, outcome: 'fetched', detail: notes.join('; '), links };
      seen.add(normaliseProfileUrl(res.finalUrl));
    }
    pages.push(page);
    await opts.onPage(page);
    if (page.depth >= limits.maxDepth) continue;
    for (const link of page.links) {
      if (!/^https?:/i.test(link)) continue; // mailto:, xmpp: and the like name no page to read
      const key = normaliseProfileUrl(link);
      if (seen.has(key)) continue;
      seen.add(key);
      queue.push({ url: link, depth: page.depth + 1, viaUrl: page.url });
    }
  }
  return { pages, stoppedBy };
}
