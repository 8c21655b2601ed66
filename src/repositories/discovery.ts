// Discovery runs and their pages, and the pages proven to be a user's own. Rows
// become domain values here: 0/1 columns leave as booleans.
import type { Handle, Write } from '../db/handle.js';

export type RunStatus = 'queued' | 'running' | 'done';
export type StoppedBy = 'page_limit' | 'time_limit';
export type PageKind = 'identity' | 'ambiguous' | 'homepage';
export type PageOutcome = 'fetched' | 'unreachable' | 'not_fetched';

export interface DiscoveryRun {
  id: number;
  userRef: number;
  startUrl: string;
  status: RunStatus;
  pagesFetched: number;
  stoppedBy: StoppedBy | null;
  createdAt: number;
  finishedAt: number | null;
}

export interface DiscoveryPage {
  id: number;
  runId: number;
  url: string;
  finalUrl: string | null;
  depth: number;
  viaUrl: string | null;
  fetched: boolean;
  outcome: PageOutcome;
  detail: string;
  kind: PageKind | null;
  svcId: string | null;
  usrSvcId: string | null;
  linksBack: boolean;
  fetchedAt: number;
}

type RunRow = {
  id: number;
  user_ref: number;
  start_url: string;
  status: string;
  pages_fetched: number;
  stopped_by: string | null;
  created_at: number;
  finished_at: number | null;
};

function toRun(r: RunRow): DiscoveryRun {
  return {
    id: r.id,
    userRef: r.user_ref,
    startUrl: r.start_url,
    status: r.status as RunStatus,
    pagesFetched: r.pages_fetched,
    stoppedBy: r.stopped_by as StoppedBy | null,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
  };
}

const RUN_COLUMNS = ['id', 'user_ref', 'start_url', 'status', 'pages_fetched', 'stopped_by', 'created_at', 'finished_at'] as const;

export async function createRun(db: Write, userRef: number, startUrl: string, now: number): Promise<DiscoveryRun> {
  const row = await db.kysely
    .insertInto('discovery_runs')
    .values({ user_ref: userRef, start_url: startUrl, status: 'queued', created_at: now })
    .returning(RUN_COLUMNS)
    .executeTakeFirstOrThrow();
  return toRun(row);
}

/** The user's newest run, whatever its state. */
export async function latestRun(db: Handle, userRef: number): Promise<DiscoveryRun | undefined> {
  const row = await db.kysely
    .selectFrom('discovery_runs')
    .select(RUN_COLUMNS)
    .where('user_ref', '=', userRef)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? toRun(row) : undefined;
}

export async function findRun(db: Handle, userRef: number, runId: number): Promise<DiscoveryRun | undefined> {
  const row = await db.kysely.selectFrom('discovery_runs').select(RUN_COLUMNS).where('user_ref', '=', userRef).where('id', '=', runId).executeTakeFirst();
  return row ? toRun(row) : undefined;
}

/**
 * Claims one run that is queued, or running under a lease that ran out (its instance stopped).
 * The claim is a conditional UPDATE from the values read, so of several instances one wins.
 */
export async function claimRun(db: Write, now: number, leaseMs: number): Promise<DiscoveryRun | undefined> {
  const due = await db.kysely
    .selectFrom('discovery_runs')
    .select(['id', 'status', 'lease_until'])
    .where((eb) => eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]))
    .orderBy('id')
    .limit(5)
    .execute();
  for (const d of due) {
    const claimed = await db.kysely
      .updateTable('discovery_runs')
      .set({ status: 'running', lease_until: now + leaseMs, pages_fetched: 0 })
      .where('id', '=', d.id)
      .where('status', '=', d.status)
      .where('lease_until', d.lease_until === null ? 'is' : '=', d.lease_until)
      .returning(RUN_COLUMNS)
      .executeTakeFirst();
    if (claimed) {
      // A run taken over from a stopped instance starts again from nothing.
      await db.kysely.deleteFrom('discovery_pages').where('run_id', '=', claimed.id).execute();
      return toRun(claimed);
    }
  }
  return undefined;
}

export type NewPage = Pick<DiscoveryPage, 'url' | 'finalUrl' | 'depth' | 'viaUrl' | 'fetched' | 'outcome' | 'detail'>;

/** Records one fetch (or a page found but not fetched) and counts it towards the run's progress. */
export async function recordPage(db: Write, run: DiscoveryRun, page: NewPage, now: number): Promise<number> {
  const row = await db.kysely
    .insertInto('discovery_pages')
    .values({
      run_id: run.id,
      user_ref: run.userRef,
      url: page.url,
      final_url: page.finalUrl,
      depth: page.depth,
      via_url: page.viaUrl,
      fetched: page.fetched ? 1 : 0,
      outcome: page.outcome,
      detail: page.detail,
      fetched_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (page.fetched)
    await db.kysely
      .updateTable('discovery_runs')
      .set((eb) => ({ pages_fetched: eb('pages_fetched', '+', 1) }))
      .where('id', '=', run.id)
      .execute();
  return row.id;
}

export interface PageFinding {
  pageId: number;
  kind: PageKind;
  svcId: string | null;
  usrSvcId: string | null;
  linksBack: boolean;
}

export async function finishRun(db: Write, runId: number, findings: PageFinding[], stoppedBy: StoppedBy | null, now: number): Promise<void> {
  for (const f of findings) {
    await db.kysely
      .updateTable('discovery_pages')
      .set({ kind: f.kind, svc_id: f.svcId, usr_svc_id: f.usrSvcId, links_back: f.linksBack ? 1 : 0 })
      .where('id', '=', f.pageId)
      .where('run_id', '=', runId)
      .execute();
  }
  await db.kysely
    .updateTable('discovery_runs')
    .set({ status: 'done', stopped_by: stoppedBy, lease_until: null, finished_at: now })
    .where('id', '=', runId)
    .execute();
}

export async function pagesOf(db: Handle, runId: number): Promise<DiscoveryPage[]> {
  const rows = await db.kysely.selectFrom('discovery_pages').selectAll().where('run_id', '=', runId).orderBy('id').execute();
  return rows.map((r) => ({
    id: r.id,
    runId: r.run_id,
    url: r.url,
    finalUrl: r.final_url,
    depth: r.depth,
    viaUrl: r.via_url,
    fetched: r.fetched === 1,
    outcome: r.outcome as PageOutcome,
    detail: r.detail,
    kind: r.kind as PageKind | null,
    svcId: r.svc_id,
    usrSvcId: r.usr_svc_id,
    linksBack: r.links_back === 1,
    fetchedAt: r.fetched_at,
  }));
}

/** Normalised URLs of the pages proven to be the user's own. */
export async function verifiedPagesOf(db: Handle, userRef: number): Promise<string[]> {
  const rows = await db.kysely.selectFrom('verified_pages').select('url').where('user_ref', '=', userRef).orderBy('url').execute();
  return rows.map((r) => r.url);
}

export async function addVerifiedPage(db: Write, userRef: number, url: string, now: number): Promise<void> {
  await db.kysely
    .insertInto('verified_pages')
    .values({ user_ref: userRef, url, verified_at: now })
    .onConflict((oc) => oc.columns(['user_ref', 'url']).doUpdateSet({ verified_at: now }))
    .execute();
}

/** The user's runs, pages and proven pages, for account deletion. */
export async function deleteDiscoveryData(db: Write, userRef: number): Promise<void> {
  await db.kysely.deleteFrom('discovery_pages').where('user_ref', '=', userRef).execute();
  await db.kysely.deleteFrom('discovery_runs').where('user_ref', '=', userRef).execute();
  await db.kysely.deleteFrom('verified_pages').where('user_ref', '=', userRef).execute();
}

/** The user's central entries as (id, service, identifier, verified), for proposals and proofs. */
export async function identitiesOfUser(db: Handle, userRef: number): Promise<{ id: number; svcId: string; usrSvcId: string; verified: boolean }[]> {
  const rows = await db.kysely
    .selectFrom('central_identities')
    .select(['id', 'svc_id', 'usr_svc_id', 'verified'])
    .where('user_ref', '=', userRef)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: r.id, svcId: r.svc_id, usrSvcId: r.usr_svc_id, verified: r.verified === 1 }));
}

/** Marks an entry verified by a walk's rel="me" chain and records that as its latest check. */
export async function recordWalkProof(
  db: Write,
  identity: { id: number; userRef: number; svcId: string },
  url: string,
  detail: string,
  now: number,
  nextCheckAt: number,
) {
  const row = await db.kysely
    .updateTable('central_identities')
    .set({ verified: 1, verified_by: 'rel-me', verified_at: now, last_checked_at: now, evidence_url: url, negative_since: null, next_check_at: nextCheckAt })
    .where('id', '=', identity.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await db.kysely
    .insertInto('verification_attempts')
    .values({
      identity_id: identity.id,
      user_ref: identity.userRef,
      svc_id: identity.svcId,
      url,
      outcome: 'verified',
      detail,
      method: 'rel-me',
      status: null,
      attempted_at: now,
    })
    .execute();
  return { ...row, verified: true };
}

/** Every run of the user with its pages, oldest first, for the data export. */
export async function runsWithPagesOf(db: Handle, userRef: number): Promise<(DiscoveryRun & { pages: DiscoveryPage[] })[]> {
  const rows = await db.kysely.selectFrom('discovery_runs').select(RUN_COLUMNS).where('user_ref', '=', userRef).orderBy('id').execute();
  const runs = [];
  for (const r of rows) runs.push({ ...toRun(r), pages: await pagesOf(db, r.id) });
  return runs;
}
