// What reaches logs and metrics: secrets in query strings and e-mail addresses in paths are
// replaced before a URL is written anywhere (SPEC §5).
export const SECRET_FIELDS = ['api_token', 'email_address', 'password'] as const;
/** Query values kept out of logs although they may be sent in a URL: a widget signature is a short-lived pass, a mailed link's token a single-use one. */
const REDACTED_QUERY_FIELDS: readonly string[] = [...SECRET_FIELDS, 'sig', 'token'];

/**
 * A query key as a careless or hostile client may spell it: `API_TOKEN`, `Api-Token`, `api_token[]`
 * and `api%5Ftoken` (decoded before this is called) all come down to `apitoken`. Comparing these
 * forms is what keeps a value out of the log whatever the spelling; over-matching only redacts more.
 */
function keyShape(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]/g, '');
}

const REDACTED_SHAPES = new Set(REDACTED_QUERY_FIELDS.map(keyShape));
const SECRET_SHAPES = new Map<string, (typeof SECRET_FIELDS)[number]>(SECRET_FIELDS.map((f) => [keyShape(f), f]));

/** The secret field a parsed query names under any spelling of its key, if any (the request is refused then). */
export function secretQueryField(query: Record<string, unknown> | null | undefined): (typeof SECRET_FIELDS)[number] | undefined {
  if (!query) return undefined;
  for (const key of Object.keys(query)) {
    const field = SECRET_SHAPES.get(keyShape(key));
    if (field) return field;
  }
  return undefined;
}

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const cleanPath = path
    .split('/')
    .map((seg) => (/@|%40/i.test(seg) ? '[email]' : seg))
    .join('/');
  if (q === -1) return cleanPath;
  // URLSearchParams decodes keys and values (so `api%5Ftoken` is seen as `api_token`) and yields
  // every repetition of a key, each judged on its own.
  const params = new URLSearchParams(url.slice(q + 1));
  const out: string[] = [];
  for (const [k, v] of params) {
    const secret = REDACTED_SHAPES.has(keyShape(k)) || /@/.test(v);
    out.push(`${encodeURIComponent(k)}=${secret ? '[redacted]' : encodeURIComponent(v)}`);
  }
  return `${cleanPath}?${out.join('&')}`;
}
