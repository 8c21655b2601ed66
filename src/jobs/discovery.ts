// Runs queued "Find my identities" walks. Every instance polls; a run is claimed
// with a lease, so exactly one instance walks it, and a run left by a stopped instance is taken over.
import type { AppContext } from '../context.js';
import { runDueDiscoveries } from '../services/discovery.js';

export const discoveryJob = {
  name: 'discovery',
  everyMs: 2000,
  run: async (ctx: AppContext) => void (await runDueDiscoveries(ctx)),
};
