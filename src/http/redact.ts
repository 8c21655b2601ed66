// What reaches logs and metrics: secrets in query strings and e-mail addresses in paths are
// replaced before a URL is written anywhere (SPEC §5).
export const SECRET_FIELDS = ['api_token', 'email_address', 'password'] as const;
/** Query values kept out of logs although they may be sent in a URL: a widget signature is a short-lived pass, a mailed link's token a single-use one. */
const REDACTED_QUERY_FIELDS: readonly string[] = [...SECRET_FIELDS, 'sig', 'token'];

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const cleanPath = path
    .split('/')
    .map((seg) => (/@|%40/i.test(seg) ? '[email]' : seg))
    .join('/');
  if (q === -1) return cleanPath;
  const params = new URLSearchParams(url.slice(q + 1));
  const out: string[] = [];
  for (const [k, v] of params) {
    const secret = REDACTED_QUERY_FIELDS.includes(k) || /@/.test(v);
    out.push(`${encodeURIComponent(k)}=${secret ? '[redacted]' : encodeURIComponent(v)}`);
  }
  return `${cleanPath}?${out.join('&')}`;
}
