// Builds a user's profile URL from a catalogue entry. Kept free of Node imports so the widget can
// bundle the same code and show exactly the URL the server will answer with.
//
// Encoding policy (the identifier is user input and must never change which site the URL points at):
// - path position (the usual case): encodeURIComponent, then `@`, `:` and `+` are put back. RFC 3986
//   allows all three raw in a path segment, and handles such as `@neil` or `neil+x` read better
//   raw. Already left raw by encodeURIComponent: `A-Z a-z 0-9 - _ . ! ~ * ' ( )`. So `/`, `?`, `#`,
//   `\`, `%`, spaces and non-ASCII are escaped and cannot leave the segment.
// - query or fragment position (`?id={}`): as above but `+` stays `%2B`, because form decoding on
//   the site would read a raw `+` as a space.
// - host position (`https://{}.tumblr.com/`): percent-escapes are not allowed in a host name, so
//   the identifier must already be dot-separated labels of `A-Z a-z 0-9 _ -`; anything else gives "".
// - `.` and `..` give "": URL parsers resolve them (even as `%2E`) as dot-segments, which would
//   point at a different page of the site.
// - A template that already ends in `@` (`https://medium.com/@{}`) drops one leading `@` from the
//   identifier, so `@neil` does not become `/@@neil`.
// The result is always "" or a URL that parses as http(s): callers may render it as a link as is.
//
// Builders (`urlBuilder`) stand in for a template where the identifier is not a name on one site:
// `mastodon` (a handle that names its instance) and `website` (a person's own homepage or blog,
// given as its https URL or as `example.com/path`).

export const URL_BUILDERS = ['mastodon', 'website'] as const;
export type UrlBuilder = (typeof URL_BUILDERS)[number];

export function isUrlBuilder(value: unknown): value is UrlBuilder {
  return typeof value === 'string' && (URL_BUILDERS as readonly string[]).includes(value);
}

export interface ProfileUrlTemplate {
  svcLeftURL: string;
  svcRightURL: string;
  /** Typed as string so rows read from storage need no cast; an unknown builder builds "". */
  urlBuilder: string | null;
}

export function buildProfileUrl(entry: ProfileUrlTemplate, usrSvcId: string): string {
  if (entry.urlBuilder !== null) {
    return isUrlBuilder(entry.urlBuilder) ? BUILDERS[entry.urlBuilder](usrSvcId) : '';
  }
  // A service without a template (e.g. added by an operator for a service with no public pages).
  if (entry.svcLeftURL === '') return '';

  let id = usrSvcId;
  if (entry.svcLeftURL.endsWith('@') && id.startsWith('@')) id = id.slice(1);
  if (id === '' || id === '.' || id === '..') return '';

  const shape = shapeOf(entry);
  const encoded = encodeForPosition(id, shape.position);
  if (encoded === null) return '';
  const candidate = entry.svcLeftURL + encoded + entry.svcRightURL;
  if (shape.position === 'host') return asHttpUrl(candidate);
  return shape.parses ? candidate : '';
}

// What a template is, worked out once per catalogue entry rather than on every URL built: this
// runs for every entry of every return_services answer, and parsing each URL was a tenth of the
// work of such an answer. In path and query position the encoded identifier holds only
// `A-Z a-z 0-9 - _ . ! ~ * ' ( ) % @ : +`, none of which can end the segment or make a URL parser
// fail, so whether the result parses as http(s) is a property of the template alone. A host
// position still parses every URL: a label such as `xn--zz` is not a valid host.
interface TemplateShape {
  left: string;
  right: string;
  position: Position;
  /** Path and query position: whether the template with any identifier is an http(s) URL. */
  parses: boolean;
}
const shapes = new WeakMap<ProfileUrlTemplate, TemplateShape>();

function shapeOf(entry: ProfileUrlTemplate): TemplateShape {
  const known = shapes.get(entry);
  // Compared, not trusted: a caller may reuse one object with another template.
  if (known && known.left === entry.svcLeftURL && known.right === entry.svcRightURL) return known;
  const position = positionOf(entry.svcLeftURL);
  const shape = { left: entry.svcLeftURL, right: entry.svcRightURL, position, parses: asHttpUrl(`${entry.svcLeftURL}x${entry.svcRightURL}`) !== '' };
  shapes.set(entry, shape);
  return shape;
}

type Position = 'host' | 'path' | 'query';

function positionOf(left: string): Position {
  if (left.includes('?') || left.includes('#')) return 'query';
  const afterScheme = left.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  return afterScheme.includes('/') ? 'path' : 'host';
}

const HOST_IDENTIFIER = /^[A-Za-z0-9_-]{1,63}(?:\.[A-Za-z0-9_-]{1,63})*$/;

function encodeForPosition(id: string, position: Position): string | null {
  if (position === 'host') return HOST_IDENTIFIER.test(id) ? id : null;
  let encoded: string;
  try {
    encoded = encodeURIComponent(id);
  } catch {
    return null; // a lone surrogate: not a string any site could have issued
  }
  encoded = encoded.replace(/%40/g, '@').replace(/%3A/g, ':');
  return position === 'path' ? encoded.replace(/%2B/g, '+') : encoded;
}

function asHttpUrl(candidate: string): string {
  try {
    const url = new URL(candidate);
    return url.protocol === 'http:' || url.protocol === 'https:' ? candidate : '';
  } catch {
    return '';
  }
}

// Mastodon handles name their instance, so the URL cannot come from a fixed template.
const MASTODON_HANDLE = /^@?([A-Za-z0-9_]+)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})$/;

/** Longest website identifier read: the same cap every usrSvcId has. */
const WEBSITE_MAX_INPUT = 255;
const ANY_SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const HTTPS_SCHEME = /^https:\/\//i;
/** One label of a host name as the URL parser leaves it (lower case, non-ASCII as `xn--`). */
const HOST_LABEL = /^[a-z0-9-]{1,63}$/;
const ALL_DIGITS = /^[0-9]+$/;
/** The URL parser drops tabs and line breaks and escapes the rest: what was typed would not be what is shown. */
const CONTROL = /[\u0000-\u001F\u007F]/;

/**
 * A person's website: its https URL (`https://alice.github.io/blog/`) or the same without the
 * scheme (`example.com/~alice`, made https), normalised by the URL parser (host in lower case, a
 * root gets its `/`, the fragment dropped). Only https: a homepage given as http would be checked,
 * and shown to partners, over a connection anyone on the way can change. Refused: other schemes
 * (http included), credentials, ports, IP literals, control characters, and hosts that are not
 * dotted names.
 */
function websiteUrl(usrSvcId: string): URL | null {
  const text = usrSvcId.trim();
  if (text === '' || text.length > WEBSITE_MAX_INPUT || CONTROL.test(text)) return null;
  let candidate: string;
  if (HTTPS_SCHEME.test(text)) candidate = text;
  // Any other scheme, `host:port` and scheme-relative `//host` alike: none is an https address as typed.
  else if (ANY_SCHEME.test(text) || text.startsWith('/') || text.startsWith('\\')) return null;
  else candidate = `https://${text}`;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.port !== '') return null;
  const labels = url.hostname.split('.');
  if (url.hostname.length > 253 || labels.length < 2) return null;
  if (!labels.every((l) => HOST_LABEL.test(l) && !l.startsWith('-') && !l.endsWith('-'))) return null;
  // The parser writes every IPv4 form (`127.1`, `0x7f.0.0.1`) as dotted digits; no top-level domain is all digits.
  if (ALL_DIGITS.test(labels[labels.length - 1] ?? '')) return null;
  url.hash = '';
  return url;
}

/**
 * The host of a website identity whose address is that host's root (`https://example.com/`, no
 * path or query), or null: only then does the host's DNS speak for the page.
 */
export function websiteRootHost(usrSvcId: string): string | null {
  const url = websiteUrl(usrSvcId);
  return url && url.pathname === '/' && url.search === '' ? url.hostname : null;
}

const BUILDERS: Record<UrlBuilder, (usrSvcId: string) => string> = {
  mastodon(usrSvcId) {
    const match = MASTODON_HANDLE.exec(usrSvcId.trim());
    if (!match) return '';
    const [, user = '', instance = ''] = match;
    return asHttpUrl(`https://${instance.toLowerCase()}/@${user}`);
  },
  website(usrSvcId) {
    return websiteUrl(usrSvcId)?.href ?? '';
  },
};

const compiledPatterns = new Map<string, RegExp | null>();

/**
 * Whether an identifier fits the service's pattern. A missing pattern accepts anything. The
 * patterns come from Sherlock, which applies them with Python's `re.search`: unanchored patterns
 * match anywhere, which is also what `RegExp.prototype.test` does. They are compiled without flags:
 * some (e.g. `[a-zA-Z0-9-_]`) are syntax errors under the `u` flag. A pattern that does not compile
 * (the file format rejects those, so only a corrupted row) accepts anything rather than blocking users.
 */
export function matchesPattern(regexCheck: string | null, usrSvcId: string): boolean {
  if (regexCheck === null) return true;
  let pattern = compiledPatterns.get(regexCheck);
  if (pattern === undefined) {
    try {
      pattern = new RegExp(regexCheck);
    } catch {
      pattern = null;
    }
    // Patterns come from the catalogue, so this stays small; the cap only guards against misuse.
    if (compiledPatterns.size >= 5000) compiledPatterns.clear();
    compiledPatterns.set(regexCheck, pattern);
  }
  return pattern === null ? true : pattern.test(usrSvcId);
}
