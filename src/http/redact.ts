// What reaches logs and metrics: secrets in query strings and e-mail addresses in paths are
// replaced before a URL is written anywhere (SPEC §5). Which keys hold secrets is a rule on the
// key's name, not a list of names: a client's `access_token` or `client_secret` is as secret as ours.
import { err as serializeError } from 'pino-std-serializers';

/** Fields refused in an API URL as credentials_in_query (docs/spec.md); the refusal is for our own fields only. */
export const SECRET_FIELDS = ['api_token', 'email_address', 'password'] as const;

/**
 * A key as a careless or hostile client may spell it: `API_TOKEN`, `Api-Token`, `api_token[]`
 * and `api%5Ftoken` all come down to `apitoken`. Comparing these forms is what keeps a value out
 * of the log whatever the spelling; over-matching only redacts more.
 */
function keyShape(key: string): string {
  return decodeKey(key)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/**
 * Percent-decoding that never throws (a malformed `%` stays as it is) and that undoes double
 * encoding (`access%255Ftoken`); a few rounds are enough, since every round shortens the key.
 */
function decodeKey(key: string): string {
  let out = key.replace(/\+/g, ' ');
  for (let round = 0; round < 4 && out.includes('%'); round++) {
    const next = out.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    if (next === out) break;
    out = next;
  }
  return out;
}

/** Words that make a key secret wherever they appear in it: `access_token`, `x-secret`, `new_password`, `apiToken`. */
const SECRET_WORDS = /token|secret|passw|passphrase|credential|authoriz|session|cookie|signature/;
/** Short words that make a key secret only as one of its words (`sig`, `hmac_sig`, `userPin`), so that `design` or `spinner` stay readable. */
const SECRET_SHORT_WORDS = new Set(['sig', 'pwd', 'pin', 'otp', 'auth', 'code', 'email']);

/** The words of a key: split at anything but letters and digits, and where camelCase turns upper. */
function keyWords(key: string): string[] {
  return decodeKey(key)
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
}

/** Whether a query or form key names a secret (or an e-mail address), under any spelling. */
export function isSecretKey(key: string): boolean {
  return SECRET_WORDS.test(keyShape(key)) || keyWords(key).some((w) => SECRET_SHORT_WORDS.has(w));
}

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

const EMAIL_IN_VALUE = /@|%40/i;

/**
 * A query string with each secret value replaced. Pairs are split on `&` and on `;` (which some
 * parsers and proxies honour as a separator, so a value may hide a second pair); every repetition
 * of a key is judged on its own; a value holding an e-mail address is redacted whatever its key.
 */
function redactQuery(query: string): string {
  return query.replace(/([^&;=]*)(=?)([^&;]*)/g, (pair, key: string, eq: string, value: string) => {
    if (pair === '' || eq === '') return pair;
    return isSecretKey(key) || EMAIL_IN_VALUE.test(decodeKey(value)) ? `${key}=[redacted]` : pair;
  });
}

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const cleanPath = path
    .split('/')
    .map((seg) => (EMAIL_IN_VALUE.test(seg) ? '[email]' : seg))
    .join('/');
  return q === -1 ? cleanPath : `${cleanPath}?${redactQuery(url.slice(q + 1))}`;
}

/** A `key=value` pair inside free text (an error's message or stack quoting a URL or a form body). */
const PAIR_IN_TEXT = /([?&;\s"'(]|^)([^\s?&;=#"'<>()]{1,256})=([^\s&;#"'<>()]*)/g;
/**
 * An e-mail address inside free text; a path such as `node_modules/@fastify/x` has no local part
 * and stays. Every part is bounded, so a long run of address characters costs a bounded scan from
 * each position rather than a scan to the end of the text.
 */
// regex-safe: every repetition is bounded and labels end at a mandatory dot, so each start position costs a bounded number of steps (linear in the text; log-redaction.test.ts holds a 400 KB string to a CPU budget).
const EMAIL_IN_TEXT = /[A-Za-z0-9._%+-]{1,64}(?:@|%40)[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}/g;

/** Free text with secret pairs and e-mail addresses replaced: what an error may quote of a request. */
export function redactText(text: string): string {
  return text
    .replace(PAIR_IN_TEXT, (pair, lead: string, key: string) => (isSecretKey(key) ? `${lead}${key}=[redacted]` : pair))
    .replace(EMAIL_IN_TEXT, '[email]');
}

function redactStrings(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactText(value);
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactStrings(v, depth + 1));
  return redactFields(value, depth + 1);
}

function redactFields(value: object, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = redactStrings(v, depth);
  return out;
}

/**
 * The log's `err` serializer: pino's, then every string in it (message, stack, a library's own
 * fields such as a URL it could not parse, the causes) passed through redactText.
 */
export function redactedError(err: Error): { type: string; message: string; stack: string; [key: string]: unknown } {
  // pino's serializer gives anything that is not an Error back as it is (a plain `{ name, code }`,
  // say), without the message and stack an Error has: those stay absent rather than made up.
  const plain = serializeError(err) as Partial<ReturnType<typeof serializeError>>;
  return redactFields(plain, 0) as ReturnType<typeof redactedError>;
}
