// TXT look-ups for the `dns` and `atproto` methods, through node:dns's Resolver: the servers of
// DNS_SERVERS (the system's when unset), one try, VERIFY_TIMEOUT_MS. What comes back is bounded
// (records and characters) before anything is matched against it. Answers say whether a name has
// no such record (a definite negative) or could not be asked (a transient failure).
import { Resolver } from 'node:dns/promises';
import type { AppContext } from '../context.js';

const MAX_RECORDS = 32;
const MAX_RECORD_CHARS = 2048;
const MAX_NAME_CHARS = 253;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A host name in lower case when `raw` is one (labels of letters, digits and hyphens, at least two), else null. */
export function hostName(raw: string): string | null {
  const name = raw.trim().toLowerCase().replace(/\.$/, '');
  if (name.length === 0 || name.length > MAX_NAME_CHARS) return null;
  const labels = name.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null;
  return name;
}

export type TxtAnswer = { ok: true; records: string[] } | { ok: false; definite: boolean; code: string };

// Codes that mean "the name or its TXT record does not exist": the zone answered.
const DEFINITE = new Set(['ENOTFOUND', 'ENODATA']);

export async function resolveTxt(ctx: AppContext, name: string): Promise<TxtAnswer> {
  const resolver = new Resolver({ timeout: ctx.config.verifyTimeoutMs, tries: 1 });
  if (ctx.config.dnsServers.length > 0) resolver.setServers([...ctx.config.dnsServers]);
  try {
    const chunks = await resolver.resolveTxt(name);
    // A record may come in several strings of up to 255 characters; they are one value.
    return { ok: true, records: chunks.slice(0, MAX_RECORDS).map((parts) => parts.join('').slice(0, MAX_RECORD_CHARS)) };
  } catch (err) {
    const code = typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : 'EUNKNOWN';
    return { ok: false, definite: DEFINITE.has(code), code };
  } finally {
    resolver.cancel();
  }
}

/** A DNS failure in words for the person. */
export function dnsFailureText(code: string): string {
  if (code === 'ENOTFOUND') return 'the name does not exist';
  if (code === 'ENODATA') return 'the name has no TXT record';
  if (code === 'ETIMEOUT') return 'the DNS servers did not answer in time';
  if (code === 'ESERVFAIL') return 'the DNS servers failed to answer';
  if (code === 'ECONNREFUSED') return 'the DNS servers refused the connection';
  return `the DNS query failed (${code})`;
}
