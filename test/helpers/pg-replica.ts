// A real PostgreSQL primary and a streaming replica of it, for the tests of read replicas
// (src/db/replicas.ts): `initdb`, `pg_basebackup -R` and `pg_ctl`, run as the `postgres` user
// (PostgreSQL refuses to run as root), on loopback ports this process found free, in a temporary
// directory removed at the end. Nothing here touches the machine's own PostgreSQL server.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/** The directory of this machine's PostgreSQL programs (Debian: /usr/lib/postgresql/N/bin), or null. */
export function pgBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : null;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ReplicatedPostgres {
  primaryUrl: string;
  replicaUrl: string;
  /** Resolves once the replica has applied everything the primary had written when it was called. */
  caughtUp(): Promise<void>;
  stopReplica(): void;
  close(): void;
}

/**
 * Starts a primary and a replica that applies each commit `applyDelayMs` after the primary made it
 * (recovery_min_apply_delay), so a test can see which one answered.
 */
export async function startReplicatedPostgres(applyDelayMs: number): Promise<ReplicatedPostgres> {
  const bin = pgBinDir();
  if (!bin) throw new Error('PostgreSQL server programs not found under /usr/lib/postgresql');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-replica-'));
  fs.chmodSync(dir, 0o755);
  const asPostgres = (program: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', path.join(bin, program), ...args], { stdio: 'pipe', timeout: 120_000 });
  execFileSync('chown', ['postgres', dir]);
  const primaryDir = path.join(dir, 'primary');
  const replicaDir = path.join(dir, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  // Sockets in the test's directory, not /var/run/postgresql (the machine's server's).
  const serverOptions = (port: number) => `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c shared_buffers=16MB`;
  const started: string[] = [];
  const stop = (data: string) => {
    if (!started.includes(data)) return;
    started.splice(started.indexOf(data), 1);
    asPostgres('pg_ctl', ['stop', '-D', data, '-m', 'fast', '-w']);
  };
  try {
    // --auth trust: local and loopback connections, replication ones included, need no password.
    asPostgres('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth', 'trust', '--no-sync']);
    asPostgres('pg_ctl', ['start', '-D', primaryDir, '-w', '-l', path.join(dir, 'primary.log'), '-o', serverOptions(primaryPort)]);
    started.push(primaryDir);
    asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '--no-sync']);
    fs.appendFileSync(path.join(replicaDir, 'postgresql.auto.conf'), `recovery_min_apply_delay = '${applyDelayMs}ms'\n`);
    asPostgres('pg_ctl', ['start', '-D', replicaDir, '-w', '-l', path.join(dir, 'replica.log'), '-o', serverOptions(replicaPort)]);
    started.push(replicaDir);
  } catch (err) {
    for (const data of [...started].reverse()) stop(data);
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
  const replicaUrl = `postgres://postgres@127.0.0.1:${replicaPort}/postgres`;
  return {
    primaryUrl,
    replicaUrl,
    async caughtUp() {
      const primary = new pg.Client({ connectionString: primaryUrl });
      const replica = new pg.Client({ connectionString: replicaUrl });
      await Promise.all([primary.connect(), replica.connect()]);
      try {
        const target = (await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
        for (;;) {
          const { rows } = await replica.query<{ done: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [target]);
          if (rows[0]!.done) return;
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        await Promise.all([primary.end(), replica.end()]);
      }
    },
    stopReplica: () => stop(replicaDir),
    close() {
      for (const data of [...started].reverse()) stop(data);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
