// Method `oauth`: an identity proven by connecting the account through its provider (GitHub,
// GitLab, a Mastodon server). The connection stored the provider's stable account id; the daily re-check resolves that
// id again in the provider's public API (no token: none is kept), so the entry follows a renamed
// account and loses its mark when the account is gone.
import type { AppContext } from '../context.js';
import { connectionOfUser, setConnectionUsername } from '../repositories/provider-connections.js';
import { mastodonHandle } from '../connections/mastodon.js';
import { accountRecordUrl, mastodonAt, type ProviderSettings } from '../connections/providers.js';
import type { CheckOutcome, CheckSubject, VerificationChecker } from './methods.js';
import { testOriginOf } from './polite-fetch.js';
import { safeFetch } from './safe-fetch.js';

const MAX_JSON_BYTES = 64 * 1024;
const GONE = new Set([404, 410]);

/** The provider that proves the entry, if configured: for Mastodon, the server the entry names (`user@server`). */
function providerFor(ctx: AppContext, subject: CheckSubject): ProviderSettings | undefined {
  const p = ctx.config.providers.find((x) => x.provesSvcId === subject.svc.svcId);
  if (p?.kind !== 'mastodon') return p;
  const at = subject.usrSvcId.lastIndexOf('@');
  const server = at > 0 ? subject.usrSvcId.slice(at + 1).toLowerCase() : '';
  return server ? mastodonAt(server) : undefined;
}

const same = (a: string, b: string) => a.trim().replace(/^@/, '').toLowerCase() === b.trim().replace(/^@/, '').toLowerCase();

/** The provider's public record of the account, when it is a JSON object. */
function recordIn(body: string): Record<string, unknown> | null {
  let doc: unknown;
  try {
    doc = JSON.parse(body) as unknown;
  } catch {
    return null;
  }
  return doc !== null && typeof doc === 'object' ? (doc as Record<string, unknown>) : null;
}

/** The account's current name in its record: GitHub's `login`, GitLab's `username`, a Mastodon handle `username@server`. */
function loginIn(p: ProviderSettings, record: Record<string, unknown>): string | null {
  if (p.kind === 'mastodon') return mastodonHandle(record.username, new URL(p.issuer).hostname);
  const v = record[p.kind === 'github' ? 'login' : 'username'];
  return typeof v === 'string' && v.length > 0 && v.length <= 100 ? v : null;
}

export const oauthChecker: VerificationChecker = {
  method: 'oauth',
  appliesTo: (svc) => svc.svcId === 'github' || svc.svcId === 'gitlab' || svc.svcId === 'mastodon',
  // Only an entry whose owner connected an account of the provider is this method's to judge.
  async concerns(ctx, subject) {
    const p = providerFor(ctx, subject);
    return p !== undefined && (await connectionOfUser(ctx.db, subject.userRef, p.key)) !== undefined;
  },
  async check(ctx: AppContext, subject: CheckSubject): Promise<CheckOutcome> {
    const p = providerFor(ctx, subject);
    const connection = p && (await connectionOfUser(ctx.db, subject.userRef, p.key));
    const url = p && connection ? accountRecordUrl(p, connection.subject) : null;
    const base = { method: 'oauth' as const, evidenceUrl: url };
    if (!p || !connection || !url) return { ...base, result: 'absent', detail: `no ${subject.svc.svcName} account is connected` };
    // GitHub counts unauthenticated reads per address; an OAuth app's own credentials get a larger allowance.
    const headers: Record<string, string> = { accept: 'application/json' };
    if (p.kind === 'github') headers.authorization = `Basic ${Buffer.from(`${p.clientId}:${p.clientSecret}`).toString('base64')}`;
    const fetcher = subject.fetch ?? ((u, o) => safeFetch(u, o));
    const res = await fetcher(testOriginOf(ctx, url), { allowPrivate: ctx.config.fetchAllowPrivate, maxBytes: MAX_JSON_BYTES, headers });
    if (!res.ok)
      return {
        ...base,
        result: 'transient',
        detail: `could not read ${url}: ${res.detail}`,
        ...(res.retryAfterMs !== undefined ? { retryAfterMs: res.retryAfterMs } : {}),
      };
    if (GONE.has(res.status))
      return { ...base, result: 'absent', status: res.status, detail: `the connected ${p.name} account no longer exists (${url} answered HTTP ${res.status})` };
    if (res.status < 200 || res.status > 299) return { ...base, result: 'transient', status: res.status, detail: `${url} answered HTTP ${res.status}` };
    const record = recordIn(res.body);
    // A Mastodon server keeps a suspended account's record, marked so.
    if (p.kind === 'mastodon' && record?.suspended === true)
      return { ...base, result: 'absent', status: res.status, detail: `the connected ${p.name} account is suspended (${url})` };
    const login = record && loginIn(p, record);
    if (!login) return { ...base, result: 'transient', status: res.status, detail: `${url} did not name the account` };
    if (connection.username !== login) await ctx.db.write((w) => setConnectionUsername(w, connection.id, login));
    if (same(login, subject.usrSvcId)) return { ...base, result: 'verified', status: res.status, detail: `the connected ${p.name} account is ${login}` };
    // The entry named the account by its old name: the account was renamed, and the entry follows it.
    if (connection.username !== null && same(connection.username, subject.usrSvcId)) {
      return {
        ...base,
        result: 'verified',
        status: res.status,
        renamedTo: login,
        detail: `the connected ${p.name} account was renamed from ${subject.usrSvcId} to ${login}`,
      };
    }
    return { ...base, result: 'absent', status: res.status, detail: `the connected ${p.name} account is ${login}, not ${subject.usrSvcId}` };
  },
};
