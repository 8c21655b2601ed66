// The sign-in providers an operator configured (docs/operations.md): GitHub, GitLab (any instance),
// Google, any OpenID Connect provider named in OIDC_PROVIDERS, and Mastodon on any server
// (MASTODON_CONNECT). A provider without its settings is not offered. Every address here comes from
// the environment, except a Mastodon server's, which the person names and which is reached under the
// outbound address policy (connections/mastodon.ts); GitHub's and Google's are fixed, and only a test
// or development set-up may stand a local server in for any of them (IDSVC_TEST_PROOF_ORIGINS).
import { withoutTrailingSlashes } from '../domain/slashes.js';

export type ProviderKind = 'oidc' | 'github' | 'gitlab' | 'google' | 'mastodon';

export interface ProviderSettings {
  /** What connections are stored under: 'github', 'gitlab', 'google', 'oidc:<name>', 'mastodon:<server>'. */
  readonly key: string;
  /** The path segment of its routes: /auth/<slug>/start and the callback /auth/<slug>/callback. */
  readonly slug: string;
  readonly kind: ProviderKind;
  /** The name people see on the buttons and in mails. */
  readonly name: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The OpenID Connect issuer (OIDC, GitLab, Google); the web origin for GitHub and a Mastodon server ('' before a server is named). */
  readonly issuer: string;
  /** The catalogue service whose identity a connection proves (method `oauth`), if any. */
  readonly provesSvcId: string | null;
}

type Env = Record<string, string | undefined>;

export class ProviderConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(problem);
  }
}

const FIXED_SLUGS = new Set(['github', 'gitlab', 'google', 'mastodon']);
const GITLAB_COM = 'https://gitlab.com';

function httpUrl(env: Env, name: string, production: boolean): string {
  const raw = env[name]?.trim() ?? '';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ProviderConfigError(name, `must be an http(s) URL, got "${raw.slice(0, 100)}"`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new ProviderConfigError(name, `must be an http(s) URL, got "${raw.slice(0, 100)}"`);
  // Codes and client secrets travel to it: in production only over TLS.
  if (production && u.protocol !== 'https:') throw new ProviderConfigError(name, 'must be an https URL when NODE_ENV is production');
  if (u.search || u.hash) throw new ProviderConfigError(name, 'must not carry a query or fragment');
  return withoutTrailingSlashes(u.toString());
}

function credentials(env: Env, prefix: string): { clientId: string; clientSecret: string } | null {
  const clientId = env[`${prefix}_CLIENT_ID`]?.trim() ?? '';
  // A secret is taken as given: it may contain any printable character.
  const clientSecret = env[`${prefix}_CLIENT_SECRET`] ?? '';
  if (!clientId && !clientSecret) return null;
  if (!clientId) throw new ProviderConfigError(`${prefix}_CLIENT_ID`, `must be set when ${prefix}_CLIENT_SECRET is`);
  if (!clientSecret) throw new ProviderConfigError(`${prefix}_CLIENT_SECRET`, `must be set when ${prefix}_CLIENT_ID is`);
  if (clientId.length > 500 || clientSecret.length > 500) throw new ProviderConfigError(`${prefix}_CLIENT_ID`, 'and its secret must be at most 500 characters');
  return { clientId, clientSecret };
}

function displayName(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim() || fallback;
  if (raw.length > 40 || /[\u0000-\u001F\u007F<>"]/.test(raw))
    throw new ProviderConfigError(name, 'must be at most 40 characters, without control characters, <, > or "');
  return raw;
}

function oidcProviders(env: Env, production: boolean): ProviderSettings[] {
  const list = (env.OIDC_PROVIDERS ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const seen = new Set<string>();
  return list.map((name) => {
    if (!/^[a-z][a-z0-9]{0,19}$/.test(name))
      throw new ProviderConfigError('OIDC_PROVIDERS', `names must be 1–20 lower-case letters and digits, got "${name.slice(0, 40)}"`);
    if (FIXED_SLUGS.has(name))
      throw new ProviderConfigError('OIDC_PROVIDERS', `"${name}" is configured with its own variables (${name.toUpperCase()}_CLIENT_ID …)`);
    if (seen.has(name)) throw new ProviderConfigError('OIDC_PROVIDERS', `names "${name}" twice`);
    seen.add(name);
    const prefix = `OIDC_${name.toUpperCase()}`;
    const creds = credentials(env, prefix);
    if (!creds) throw new ProviderConfigError(`${prefix}_CLIENT_ID`, `must be set: OIDC_PROVIDERS names ${name}`);
    const issuer = httpUrl(env, `${prefix}_ISSUER`, production);
    return {
      key: `oidc:${name}`,
      slug: name,
      kind: 'oidc' as const,
      name: displayName(env, `${prefix}_NAME`, name.charAt(0).toUpperCase() + name.slice(1)),
      ...creds,
      issuer,
      provesSvcId: null,
    };
  });
}

/** Every configured provider, in the order the buttons show them. */
export function providerSettingsFromEnv(env: Env, nodeEnv: string): ProviderSettings[] {
  const production = nodeEnv === 'production';
  const out: ProviderSettings[] = [];
  const github = credentials(env, 'GITHUB');
  if (github) out.push({ key: 'github', slug: 'github', kind: 'github', name: 'GitHub', ...github, issuer: 'https://github.com', provesSvcId: 'github' });
  const gitlab = credentials(env, 'GITLAB');
  if (gitlab) {
    const base = env.GITLAB_URL?.trim() ? httpUrl(env, 'GITLAB_URL', production) : GITLAB_COM;
    // Only gitlab.com's accounts are the catalogue's GitLab identities; another instance signs in only.
    out.push({
      key: 'gitlab',
      slug: 'gitlab',
      kind: 'gitlab',
      name: displayName(env, 'GITLAB_NAME', 'GitLab'),
      ...gitlab,
      issuer: base,
      provesSvcId: base === GITLAB_COM ? 'gitlab' : null,
    });
  }
  const google = credentials(env, 'GOOGLE');
  if (google) out.push({ key: 'google', slug: 'google', kind: 'google', name: 'Google', ...google, issuer: 'https://accounts.google.com', provesSvcId: null });
  out.push(...oidcProviders(env, production));
  if (mastodonOn(env)) out.push(MASTODON);
  return out;
}

/** Mastodon before a server is named: its app is registered with each server on first use (connections/mastodon.ts). */
const MASTODON: ProviderSettings = {
  key: 'mastodon',
  slug: 'mastodon',
  kind: 'mastodon',
  name: 'Mastodon',
  clientId: '',
  clientSecret: '',
  issuer: '',
  provesSvcId: 'mastodon',
};

function mastodonOn(env: Env): boolean {
  const raw = (env.MASTODON_CONNECT ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'off' || raw === '0') return false;
  if (raw === 'on' || raw === '1') return true;
  throw new ProviderConfigError('MASTODON_CONNECT', `must be on or off, got "${raw.slice(0, 20)}"`);
}

/** Mastodon on one server, with the app registered there (credentials empty when only naming it). */
export function mastodonAt(server: string, app: { clientId: string; clientSecret: string } = { clientId: '', clientSecret: '' }): ProviderSettings {
  return { ...MASTODON, key: `mastodon:${server}`, name: `Mastodon (${server})`, issuer: `https://${server}`, ...app };
}

/** What "one account per provider" counts by: every Mastodon server is one provider, Mastodon. */
export function providerFamily(key: string): string {
  return mastodonServerOf(key) === null ? key : 'mastodon';
}

/** The server of a Mastodon connection's or flow's key (`mastodon:<server>`); null for any other provider's. */
export function mastodonServerOf(key: string): string | null {
  return key.startsWith('mastodon:') ? key.slice('mastodon:'.length) : null;
}

/** The provider connections under `key` were made with, if it is still configured. */
export function providerForKey(providers: readonly ProviderSettings[], key: string): ProviderSettings | undefined {
  const server = mastodonServerOf(key);
  if (server !== null) return providers.some((p) => p.kind === 'mastodon') ? mastodonAt(server) : undefined;
  return providers.find((p) => p.key === key);
}

/** The callback address to register with a provider. */
export function callbackUrl(baseUrl: string, p: Pick<ProviderSettings, 'slug'>): string {
  return `${baseUrl}/auth/${p.slug}/callback`;
}

/** Where a connection's proof can be read by anyone: the provider's public record of the account id. */
export function accountRecordUrl(p: ProviderSettings, subject: string): string | null {
  if (p.kind === 'github') return `https://api.github.com/user/${encodeURIComponent(subject)}`;
  if (p.kind === 'gitlab') return `${p.issuer}/api/v4/users/${encodeURIComponent(subject)}`;
  if (p.kind === 'mastodon' && p.issuer) return `${p.issuer}/api/v1/accounts/${encodeURIComponent(subject)}`;
  return null;
}
