// The `proof` method: the person puts their proof text (proof-text.ts) on the service, where its
// definition (catalogue/proofs.json, proof-providers.ts) says it must be, and the checker reads it
// back through the SSRF-safe fetcher with its size and time caps. Several definitions may serve one
// service (GitHub: the bio, or a gist the person names); any one finding the proof verifies.
import { buildProfileUrl } from '../catalogue/profile-url.js';
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import type { AppContext } from '../context.js';
import { proofUrlOf } from '../repositories/proof-urls.js';
import type { CheckOutcome, CheckSubject, VerificationChecker } from './methods.js';
import { configuredProofProviders, fillUrl, identityVariables, proofUrlVariables, readAnswer, type ProofProvider, type Variables } from './proof-providers.js';
import { proofForms } from './proof-text.js';
import { type Fetcher, retryAfterMs, testOriginOf, verificationUserAgent } from './polite-fetch.js';
import { safeFetch, type SafeFetchFailureReason } from './safe-fetch.js';

/** Profiles and API answers are small; a page past this is cut, and a proof not found in the cut part is not a negative. */
const MAX_ANSWER_BYTES = 512 * 1024;
/** A lookup's answer (one user record) is smaller still. */
const MAX_LOOKUP_BYTES = 64 * 1024;

const UNREACHABLE: Record<SafeFetchFailureReason, string> = {
  invalid_url: 'the address to read is not a valid URL',
  scheme_not_allowed: 'only http and https addresses can be read',
  port_not_allowed: 'only addresses on ports 80 and 443 can be read',
  address_not_allowed: 'the address resolves to a private network',
  dns_failed: 'the host name could not be found',
  too_many_redirects: 'the answer redirected more than 3 times',
  timeout: 'the service did not answer in time',
  connect_failed: 'could not connect to the service',
  http_error: 'the service sent an invalid response',
  deferred: 'the service was asked often enough for now, so it is asked again later',
};

/** The definitions that can prove an identity on this service, from the process's configuration. */
export function providersFor(providers: readonly ProofProvider[], svc: CatalogueEntry, usrSvcId: string): ProofProvider[] {
  const url = buildProfileUrl(svc, usrSvcId);
  return providers.filter((p) => identityVariables(p, svc.svcId, usrSvcId, url) !== null);
}

type Fetched = { ok: true; status: number; body: string; truncated: boolean; headers: Record<string, string> } | { ok: false; outcome: CheckOutcome };

async function fetchFor(ctx: AppContext, fetcher: Fetcher, url: string, accept: string | undefined, maxBytes: number, label: string): Promise<Fetched> {
  const res = await fetcher(url, {
    allowPrivate: ctx.config.fetchAllowPrivate,
    maxBytes,
    timeoutMs: ctx.config.verifyTimeoutMs,
    headers: { accept: accept ?? 'application/json, text/html;q=0.9, */*;q=0.1' },
    // Services ask API callers to say who they are and how to reach them.
    userAgent: verificationUserAgent(ctx),
  });
  if (!res.ok) {
    const outcome: CheckOutcome = {
      method: 'proof',
      result: 'transient',
      evidenceUrl: url,
      detail: `Could not read ${label}: ${UNREACHABLE[res.reason]}.`,
      ...(res.retryAfterMs !== undefined ? { retryAfterMs: res.retryAfterMs } : {}),
    };
    return { ok: false, outcome };
  }
  if (res.status === 429 || res.status >= 500) {
    const retry = retryAfterMs(res.headers['retry-after'], ctx.clock.now()) ?? undefined;
    const why = res.status === 429 ? 'is limiting how often it is asked' : 'is not answering properly';
    return {
      ok: false,
      outcome: {
        method: 'proof',
        result: 'transient',
        evidenceUrl: url,
        status: res.status,
        detail: `Could not read ${label}: the service ${why} (HTTP ${res.status}).`,
        ...(retry !== undefined ? { retryAfterMs: retry } : {}),
      },
    };
  }
  return { ok: true, status: res.status, body: res.body, truncated: res.truncated, headers: res.headers };
}

async function checkOne(ctx: AppContext, fetcher: Fetcher, p: ProofProvider, start: Variables): Promise<CheckOutcome> {
  const vars = { ...start };
  const forms = proofForms(ctx.config.baseUrl, vars.userId!);
  if (p.lookup) {
    const url = testOriginOf(ctx, fillUrl(p.lookup.url, vars));
    const got = await fetchFor(ctx, fetcher, url, 'application/json', MAX_LOOKUP_BYTES, `${p.name}'s account`);
    if (!got.ok) return got.outcome;
    if (got.status === 404 || got.status === 410)
      return { method: 'proof', result: 'absent', evidenceUrl: url, status: got.status, detail: `${p.name} has no account ${vars.user}.` };
    if (got.status < 200 || got.status > 299)
      return {
        method: 'proof',
        result: 'transient',
        evidenceUrl: url,
        status: got.status,
        detail: `${p.name} answered HTTP ${got.status} when asked for the account ${vars.user}.`,
      };
    let json: unknown;
    try {
      json = JSON.parse(got.body);
    } catch {
      return {
        method: 'proof',
        result: 'transient',
        evidenceUrl: url,
        status: got.status,
        detail: `${p.name}'s answer about the account ${vars.user} could not be read as JSON.`,
      };
    }
    const found = lookupValue(json, p.lookup.at);
    if (found === undefined)
      return { method: 'proof', result: 'absent', evidenceUrl: url, status: got.status, detail: `${p.name} has no account ${vars.user}.` };
    // A dot-segment would make the next address another resource of the service.
    if (found === '' || found === '.' || found === '..')
      return {
        method: 'proof',
        result: 'transient',
        evidenceUrl: url,
        status: got.status,
        detail: `${p.name}'s answer about the account ${vars.user} is not one that can be followed.`,
      };
    vars[p.lookup.as] = found;
  }
  const url = testOriginOf(ctx, fillUrl(p.fetch.url, vars));
  const got = await fetchFor(ctx, fetcher, url, p.fetch.accept, MAX_ANSWER_BYTES, `${p.name}`);
  if (!got.ok) return got.outcome;
  const reading = readAnswer(p, vars, { status: got.status, body: got.body, truncated: got.truncated }, forms);
  return { method: 'proof', result: reading.result, evidenceUrl: url, status: got.status, detail: `${capitalise(reading.detail)}.` };
}

function lookupValue(json: unknown, at: string): string | undefined {
  let v: unknown = json;
  for (const step of at.split('.')) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = Array.isArray(v) ? (/^\d{1,6}$/.test(step) ? v[Number(step)] : undefined) : (v as Record<string, unknown>)[step];
  }
  return typeof v === 'string' || typeof v === 'number' ? String(v).slice(0, 200) : undefined;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Which outcome speaks for the method when several definitions were asked: verified, else could-not-look, else absent. */
function strongest(outcomes: CheckOutcome[]): CheckOutcome {
  return outcomes.find((o) => o.result === 'verified') ?? outcomes.find((o) => o.result === 'transient') ?? outcomes[0]!;
}

export async function checkProof(
  ctx: AppContext,
  subject: CheckSubject,
  providers: readonly ProofProvider[] = ctx.config.proofProviders,
): Promise<CheckOutcome> {
  const url = buildProfileUrl(subject.svc, subject.usrSvcId);
  const outcomes: CheckOutcome[] = [];
  // The address the person gave is kept with the identity: read here when the caller did not, and
  // only for services where some definition reads one.
  const readsAddress = providers.some((p) => p.proofUrlPattern && identityVariables(p, subject.svc.svcId, subject.usrSvcId, url));
  const proofUrl = subject.proofUrl ?? (readsAddress ? await proofUrlOf(ctx.db, subject.identityId) : null);
  for (const p of providers) {
    const base = identityVariables(p, subject.svc.svcId, subject.usrSvcId, url);
    if (!base) continue;
    let vars: Variables = { ...base, userId: subject.userId };
    if (p.proofUrlPattern) {
      if (proofUrl === null) continue;
      const given = proofUrlVariables(p, vars, proofUrl);
      if (given === null) continue;
      if ('refused' in given) {
        outcomes.push({
          method: 'proof',
          result: 'absent',
          evidenceUrl: null,
          detail: `The proof address you gave is not yours on ${p.name}: ${given.refused}.`,
        });
        continue;
      }
      vars = given.vars;
    }
    const outcome = await checkOne(ctx, subject.fetch ?? safeFetch, p, vars);
    outcomes.push(outcome);
    if (outcome.result === 'verified') break;
  }
  if (outcomes.length === 0) {
    return {
      method: 'proof',
      result: 'absent',
      evidenceUrl: null,
      detail: readsAddress
        ? `No proof address is given for this identity, or it is not one ${subject.svc.svcName} proofs can be read from.`
        : `${subject.svc.svcName} identities cannot be proven with a proof text.`,
    };
  }
  return strongest(outcomes);
}

export const proofChecker: VerificationChecker = {
  method: 'proof',
  appliesTo(svc, usrSvcId) {
    // appliesTo is asked without a context (the catalogue coverage asks it of every service).
    return providersFor(configuredProofProviders(), svc, usrSvcId).length > 0;
  },
  check(ctx, subject) {
    return checkProof(ctx, subject);
  },
};
