// "Find my identities": a run starts from one URL the user controls, walks its
// rel="me" links in the background (src/jobs/discovery.ts), and recognises every page found as a
// catalogue identity (part 1) or a homepage. A page that links with rel="me" to the user's
// /u/{userId}, or to a page already proven to be theirs, is proven too (transitive rel="me");
// what the user ticks is added, proven entries verified, the others unverified and checked as usual.
import type { AppContext } from '../context.js';
import {
  addVerifiedPage,
  claimRun,
  createRun,
  finishRun,
  findRun,
  identitiesOfUser,
  latestRun,
  pagesOf,
  recordPage,
  recordWalkProof,
  type DiscoveryRun,
  type PageFinding,
} from '../repositories/discovery.js';
import { findUserByRef, type User } from '../repositories/users.js';
import { normaliseProfileUrl } from '../verification/relme.js';
import { crawlRelMe, type CrawledPage } from '../verification/relme-crawl.js';
import { profilePageUrl, RECHECK_AFTER_MS } from '../verification/verify.js';
import { userProvenUrls } from '../verification/relme-checker.js';
import { announce, identityData, setCentralIdentity, verificationData } from './central.js';
import { recogniseProfileUrl } from './profile-urls.js';

/** Longer than a whole walk (30 s), so a live run is never taken over; a stopped instance's is. */
const LEASE_MS = 120_000;
/** Runs a user may start a minute: each fetches up to 25 pages on their behalf. */
const RUNS_PER_MINUTE = 3;
/** A walk's proof is used for adding only this long; later the entry is added unverified and checked. */
const PROOF_FRESH_MS = 60 * 60 * 1000;

export type StartOutcome = { started: true; run: DiscoveryRun } | { started: false; reason: 'invalid_url' | 'busy' | 'throttled'; retryAfterSeconds?: number };

function httpUrl(raw: string): string | null {
  const text = raw.trim();
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** Queues a run: one at a time per user, a few a minute. */
export async function startDiscovery(ctx: AppContext, user: User, rawUrl: string): Promise<StartOutcome> {
  const url = httpUrl(rawUrl);
  if (!url) return { started: false, reason: 'invalid_url' };
  const current = await latestRun(ctx.db, user.id);
  if (current && current.status !== 'done') return { started: false, reason: 'busy' };
  const limit = await ctx.limiter.consume('site-discover', String(user.id), RUNS_PER_MINUTE);
  if (!limit.allowed) return { started: false, reason: 'throttled', retryAfterSeconds: limit.resetSeconds };
  return { started: true, run: await ctx.db.write((w) => createRun(w, user.id, url, ctx.clock.now())) };
}

/** Runs every queued run there is (or was left by a stopped instance); returns how many ran. */
export async function runDueDiscoveries(ctx: AppContext, max = 5): Promise<number> {
  let ran = 0;
  while (ran < max) {
    const run = await ctx.db.write((w) => claimRun(w, ctx.clock.now(), LEASE_MS));
    if (!run) break;
    await runDiscovery(ctx, run);
    ran++;
  }
  return ran;
}

async function runDiscovery(ctx: AppContext, run: DiscoveryRun): Promise<void> {
  const db = ctx.db;
  const user = await findUserByRef(db, run.userRef);
  if (!user) return;
  const profile = profilePageUrl(ctx, user.user_id);
  const pageIds = new Map<CrawledPage, number>();
  const result = await crawlRelMe(run.startUrl, {
    allowPrivate: ctx.config.fetchAllowPrivate,
    skip: new Set([normaliseProfileUrl(profile)]),
    async onPage(page) {
      pageIds.set(page, await db.write((w) => recordPage(w, run, page, ctx.clock.now())));
    },
  });

  const proven = await provenPages(ctx, user, profile, result.pages);
  const findings: PageFinding[] = [];
  for (const page of result.pages) {
    const id = pageIds.get(page);
    if (id === undefined || normaliseProfileUrl(page.url) === normaliseProfileUrl(profile)) continue;
    let found = await recogniseProfileUrl(ctx, page.url);
    if (found.kind === 'none' && page.finalUrl) found = await recogniseProfileUrl(ctx, page.finalUrl);
    const linksBack = proven.has(page);
    if (found.kind === 'match') findings.push({ pageId: id, kind: 'identity', svcId: found.svc.svcId, usrSvcId: found.usrSvcId, linksBack });
    else findings.push({ pageId: id, kind: found.kind === 'ambiguous' ? 'ambiguous' : 'homepage', svcId: null, usrSvcId: null, linksBack });
  }
  await db.write((w) => finishRun(w, run.id, findings, result.stoppedBy, ctx.clock.now()));
}

/**
 * The fetched pages proven to be the user's: those linking with rel="me" to the profile page, to a
 * page proven earlier (a verified identity, a proven homepage), or to one proven in this walk,
 * repeated until nothing changes. Links only count from a page to a proven one, never the reverse:
 * two strangers' pages linking to each other prove nothing.
 */
async function provenPages(ctx: AppContext, user: User, profile: string, pages: CrawledPage[]): Promise<Set<CrawledPage>> {
  const accepted = new Set([normaliseProfileUrl(profile), ...(await userProvenUrls(ctx, user.id))]);
  const proven = new Set<CrawledPage>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const page of pages) {
      if (proven.has(page) || !page.links.some((l) => accepted.has(normaliseProfileUrl(l)))) continue;
      proven.add(page);
      accepted.add(normaliseProfileUrl(page.url));
      if (page.finalUrl) accepted.add(normaliseProfileUrl(page.finalUrl));
      changed = true;
    }
  }
  return proven;
}

export interface DiscoveryView {
  run: DiscoveryRun;
  pages: Awaited<ReturnType<typeof pagesOf>>;
  /** svcId → identifier the user already has, to mark proposals already added. */
  existing: Map<string, string>;
}

export async function discoveryView(ctx: AppContext, user: User): Promise<DiscoveryView | null> {
  const run = await latestRun(ctx.db, user.id);
  if (!run) return null;
  const pages = run.status === 'done' ? await pagesOf(ctx.db, run.id) : [];
  const rows = await identitiesOfUser(ctx.db, user.id);
  return { run, pages, existing: new Map(rows.map((r) => [r.svcId, r.usrSvcId])) };
}

/**
 * Adds the ticked identities of a finished run. Proven ones are added verified (their proof is the
 * walk, recorded as a verification attempt); the others unverified, for the usual check. Homepages
 * the walk proved become pages that later checks accept as a rel="me" target.
 */
export async function addDiscovered(ctx: AppContext, user: User, runId: number, pageIds: number[]): Promise<number> {
  const db = ctx.db;
  const run = await findRun(db, user.id, runId);
  if (run?.status !== 'done') return 0;
  const snap = await ctx.catalogue.get();
  const pages = await pagesOf(db, run.id);
  const now = ctx.clock.now();
  const fresh = run.finishedAt !== null && now - run.finishedAt <= PROOF_FRESH_MS;
  const wanted = new Set(pageIds);
  // A user has one entry per service: of two ticked profiles on one service, the first is added.
  const servicesDone = new Set<string>();
  let added = 0;
  await db.write(async (w) => {
    for (const page of pages) {
      if (page.kind === 'homepage' && page.linksBack && fresh) {
        await addVerifiedPage(w, user.id, normaliseProfileUrl(page.url), now);
        if (page.finalUrl) await addVerifiedPage(w, user.id, normaliseProfileUrl(page.finalUrl), now);
      }
      if (!wanted.has(page.id) || page.kind !== 'identity' || page.svcId === null || page.usrSvcId === null) continue;
      const svc = snap.byId.get(page.svcId);
      if (!svc || servicesDone.has(svc.svcId)) continue;
      servicesDone.add(svc.svcId);
      const { row } = await setCentralIdentity(w, user, svc, page.usrSvcId, { partnerId: null }, now);
      added++;
      if (!page.linksBack || !fresh || row.verified) continue;
      const verified = await recordWalkProof(
        w,
        { id: row.id, userRef: user.id, svcId: svc.svcId },
        page.url,
        'rel="me" link to a page of yours found by “Find my identities”',
        now,
        now + RECHECK_AFTER_MS,
      );
      await announce(w, user, 'identity.updated', identityData(user, svc, verified), now);
      await announce(w, user, 'identity.verified', verificationData(user, svc, verified, null), now);
    }
  });
  return added;
}
