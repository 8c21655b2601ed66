// V8 settings for a process that serves requests (`idsvc serve`).
//
// Allocation-site pretenuring off: V8 allocates the objects of an allocation site straight in the
// old generation once most of them have survived a young-generation collection. A burst that
// queues requests (a cold start, a spike) makes the sites of short-lived objects look long-lived
// (the PostgreSQL driver's result rows most of all), and V8 rarely takes that back, so from then on
// every row went to the old generation: slower young collections and a mark-compact every few
// seconds, the open-loop tail on PostgreSQL (docs/performance.md). A request's objects die young;
// the few that live long (cached answers) are copied once.
import v8 from 'node:v8';

export const PRETENURING_OFF = '--no-allocation-site-pretenuring';

export function keepShortLivedObjectsYoung(setFlags: (flags: string) => void = v8.setFlagsFromString): void {
  setFlags(PRETENURING_OFF);
}
