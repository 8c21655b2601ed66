// PostgreSQL as it ships, and as operators run it, vacuums and analyzes tables in the background
// (autovacuum). The server of this machine kind runs with autovacuum off (its CI settings): there, a
// scenario that writes (update_service, the mix) leaves every dead row and stale planner statistics
// to the scenarios after it, and the change feed's table, which gains and prunes a row per changed
// tag, grows without bound. For a PostgreSQL run the benchmark turns autovacuum on (ALTER SYSTEM,
// then a reload: no restart) and puts the setting back as it found it when the run ends.
import pg from 'pg';

export interface AutovacuumHold {
  /** What the server had: 'on', 'off', or 'unknown' when it could not be asked. */
  readonly found: string;
  /** Whether the run turned it on (and so turns it off again). */
  readonly turnedOn: boolean;
  restore(): Promise<void>;
}

async function withAdmin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function holdAutovacuumOn(adminUrl: string, log: (msg: string) => void): Promise<AutovacuumHold> {
  const found = await withAdmin(adminUrl, async (c) => (await c.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0]!.autovacuum).catch(() => 'unknown');
  if (found !== 'off') return { found, turnedOn: false, restore: async () => {} };
  await withAdmin(adminUrl, async (c) => {
    await c.query('ALTER SYSTEM SET autovacuum = on');
    await c.query('SELECT pg_reload_conf()');
  });
  log('PostgreSQL had autovacuum off: on for this run, as PostgreSQL ships (put back at the end)');
  return {
    found,
    turnedOn: true,
    restore: () =>
      withAdmin(adminUrl, async (c) => {
        await c.query('ALTER SYSTEM RESET autovacuum');
        await c.query('SELECT pg_reload_conf()');
      }),
  };
}
