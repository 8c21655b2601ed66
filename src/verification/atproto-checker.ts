// A Bluesky/ATProto handle (method `atproto`). Three links, each read where it is authoritative:
// 1. the handle names a DID: a `did=` TXT record at `_atproto.<handle>`, else the body of
//    `https://<handle>/.well-known/atproto-did`;
// 2. the DID document (did:plc from the PLC directory, did:web from `https://<domain>/.well-known/did.json`)
//    names the handle back (`alsoKnownAs: at://<handle>`);
// 3. the account: the profile record (app.bsky.actor.profile/self) that the DID's own PDS, named
//    in the DID document, serves holds one of the account's proof texts in its description.
// The first two prove the handle is the DID's; the third that the DID's owner is this account.
// A handle without a dot is taken as `<handle>.bsky.social`, as the catalogue's Bluesky URL reads it.
import type { CheckOutcome, CheckSubject, VerificationChecker } from './methods.js';
import type { AppContext } from '../context.js';
import { holdsProofText } from './proof-text.js';
import { dnsFailureText, hostName, resolveTxt } from './dns-txt.js';
import { safeFetch } from './safe-fetch.js';
import type { Fetcher } from './polite-fetch.js';

const DID_PLC = /^did:plc:[a-z2-7]{24}$/;
const DID_WEB_PREFIX = 'did:web:';
/** A DID document or a record is small; anything past this is not read. */
const MAX_JSON_BYTES = 64 * 1024;
const GONE = new Set([400, 404, 410]);

type Step<T> = { ok: true; value: T; evidenceUrl: string } | { ok: false; outcome: CheckOutcome };

export function handleOf(usrSvcId: string): string | null {
  const raw = usrSvcId.trim().replace(/^@/, '');
  return hostName(raw.includes('.') ? raw : `${raw}.bsky.social`);
}

function fail(
  result: 'absent' | 'transient',
  evidenceUrl: string | null,
  detail: string,
  status?: number,
  retryAfterMs?: number,
): { ok: false; outcome: CheckOutcome } {
  const base = { method: 'atproto' as const, evidenceUrl, detail, ...(status !== undefined ? { status } : {}) };
  return { ok: false, outcome: result === 'absent' ? { ...base, result } : { ...base, result, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) } };
}

/** GETs a URL; a non-2xx answer is absent when it says "not there", else transient. */
async function read(fetcher: Fetcher, ctx: AppContext, url: string, what: string, accept: string): Promise<Step<string>> {
  const res = await fetcher(url, { allowPrivate: ctx.config.fetchAllowPrivate, maxBytes: MAX_JSON_BYTES, headers: { accept } });
  if (!res.ok) return fail('transient', url, `could not read ${what} at ${url}: ${res.detail}`, undefined, res.retryAfterMs);
  if (res.status < 200 || res.status > 299) {
    return fail(GONE.has(res.status) ? 'absent' : 'transient', url, `${what} at ${url} answered HTTP ${res.status}`, res.status);
  }
  if (res.truncated) return fail('absent', url, `${what} at ${url} is larger than ${MAX_JSON_BYTES} bytes`, res.status);
  return { ok: true, value: res.body, evidenceUrl: url };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

async function didOfHandle(ctx: AppContext, fetcher: Fetcher, handle: string): Promise<Step<string>> {
  const name = `_atproto.${handle}`;
  const txt = await resolveTxt(ctx, name);
  if (txt.ok) {
    const did = txt.records
      .find((r) => r.startsWith('did='))
      ?.slice(4)
      .trim();
    if (did) return { ok: true, value: did, evidenceUrl: `dns:TXT:${name}` };
  } else if (!txt.definite) {
    return fail('transient', `dns:TXT:${name}`, `could not resolve ${name}: ${dnsFailureText(txt.code)}`);
  }
  const url = `https://${handle}/.well-known/atproto-did`;
  const body = await read(fetcher, ctx, url, "the handle's DID", 'text/plain');
  if (!body.ok) {
    if (body.outcome.result === 'absent')
      return fail('absent', url, `${handle} names no DID: no did= TXT record at ${name}, and ${body.outcome.detail}`, body.outcome.status);
    return body;
  }
  const did = body.value.trim().split('\n')[0]?.trim() ?? '';
  if (!did.startsWith('did:')) return fail('absent', url, `${url} does not hold a DID`, 200);
  return { ok: true, value: did, evidenceUrl: url };
}

function didDocumentUrl(ctx: AppContext, did: string): string | null {
  if (DID_PLC.test(did)) return `${ctx.config.plcDirectoryUrl}/${did}`;
  if (did.startsWith(DID_WEB_PREFIX)) {
    // Only a bare host: a did:web with a port or a path is not an ATProto identity.
    const host = hostName(did.slice(DID_WEB_PREFIX.length));
    return host === null ? null : `https://${host}/.well-known/did.json`;
  }
  return null;
}

interface DidDocument {
  alsoKnownAs?: unknown;
  service?: unknown;
}

function pdsOf(doc: DidDocument): string | null {
  if (!Array.isArray(doc.service)) return null;
  for (const s of doc.service.slice(0, 16) as unknown[]) {
    if (typeof s !== 'object' || s === null) continue;
    const { id, type, serviceEndpoint } = s as Record<string, unknown>;
    if (typeof id === 'string' && id.endsWith('#atproto_pds') && type === 'AtprotoPersonalDataServer' && typeof serviceEndpoint === 'string') {
      try {
        const u = new URL(serviceEndpoint);
        if (u.protocol === 'https:' || u.protocol === 'http:') return `${u.protocol}//${u.host}`;
      } catch {
        return null;
      }
    }
  }
  return null;
}

async function check(ctx: AppContext, subject: CheckSubject): Promise<CheckOutcome> {
  const fetcher = subject.fetch ?? safeFetch;
  const handle = handleOf(subject.usrSvcId);
  if (handle === null) return { method: 'atproto', result: 'absent', evidenceUrl: null, detail: `${subject.usrSvcId} is not a handle (a domain name)` };
  const did = await didOfHandle(ctx, fetcher, handle);
  if (!did.ok) return did.outcome;
  const docUrl = didDocumentUrl(ctx, did.value);
  if (docUrl === null)
    return {
      method: 'atproto',
      result: 'absent',
      evidenceUrl: did.evidenceUrl,
      detail: `${handle} names ${did.value.slice(0, 80)}, which is neither a did:plc nor a did:web`,
    };
  const docText = await read(fetcher, ctx, docUrl, 'the DID document', 'application/did+ld+json, application/json');
  if (!docText.ok) return docText.outcome;
  const doc = parseJson(docText.value);
  if (typeof doc !== 'object' || doc === null)
    return { method: 'atproto', result: 'absent', evidenceUrl: docUrl, detail: `the DID document at ${docUrl} is not JSON` };
  const aka = (doc as DidDocument).alsoKnownAs;
  const namesHandle = Array.isArray(aka) && aka.slice(0, 16).some((a) => typeof a === 'string' && a.toLowerCase() === `at://${handle}`);
  if (!namesHandle)
    return { method: 'atproto', result: 'absent', evidenceUrl: docUrl, detail: `the DID document at ${docUrl} does not name at://${handle} in alsoKnownAs` };
  const pds = pdsOf(doc as DidDocument);
  if (pds === null) return { method: 'atproto', result: 'absent', evidenceUrl: docUrl, detail: `the DID document at ${docUrl} names no ATProto PDS` };
  const recordUrl = `${pds}/xrpc/com.atproto.repo.getRecord?${new URLSearchParams({ repo: did.value, collection: 'app.bsky.actor.profile', rkey: 'self' })}`;
  const recordText = await read(fetcher, ctx, recordUrl, 'the profile record', 'application/json');
  if (!recordText.ok) return recordText.outcome;
  const record = parseJson(recordText.value) as { value?: { description?: unknown } } | undefined;
  const description = typeof record?.value?.description === 'string' ? record.value.description : '';
  if (holdsProofText(ctx, subject.userId, description)) {
    return {
      method: 'atproto',
      result: 'verified',
      evidenceUrl: recordUrl,
      status: 200,
      detail: `${handle} is ${did.value}, whose DID document names the handle back and whose profile description holds the proof text`,
    };
  }
  return {
    method: 'atproto',
    result: 'absent',
    evidenceUrl: recordUrl,
    status: 200,
    detail: `${handle} is ${did.value} and its DID document names the handle back, but the profile description at ${recordUrl} does not hold ${subject.profilePageUrl} (or its short form)`,
  };
}

export const atprotoChecker: VerificationChecker = {
  method: 'atproto',
  appliesTo: (svc, usrSvcId) => svc.svcId === 'bluesky' && handleOf(usrSvcId) !== null,
  check,
};
