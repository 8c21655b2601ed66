// Runs the real `idsvc serve` as its own process (see idsvc-command.ts for how it is started), with nothing of
// this process's environment but PATH and HOME, on a database of the test's own.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { projectRoot } from '../../src/paths.js';
import { PG_URL, TEST_DB } from './app.js';
import { idsvcArgv } from './idsvc-command.js';

export interface ServedIdsvc {
  child: ChildProcessWithoutNullStreams;
  url: string;
  /** Everything printed on stdout so far (the JSON log lines). */
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when a line matching `pattern` has been printed. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/** A database of the test's own: a SQLite file in a temporary directory, or a PostgreSQL schema. */
export interface TestDatabase {
  env: Record<string, string>;
  dir: string;
  sqliteFile: string | null;
  drop(): Promise<void>;
}

export function testDatabase(prefix: string): TestDatabase {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `idsvc-${prefix}-`));
  const schema = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const sqliteFile = TEST_DB === 'postgres' ? null : path.join(dir, 'idsvc.sqlite');
  const env: Record<string, string> = sqliteFile ? { DATABASE_URL: `sqlite:${sqliteFile}` } : { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };
  env.MAIL_DIR = path.join(dir, 'mail');
  return {
    env,
    dir,
    sqliteFile,
    async drop() {
      fs.rmSync(dir, { recursive: true, force: true });
      if (TEST_DB === 'postgres') {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await c.end();
      }
    },
  };
}

export async function serveIdsvc(env: Record<string, string>, args: string[] = [], { cwd = projectRoot }: { cwd?: string } = {}): Promise<ServedIdsvc> {
  const child = spawn(process.execPath, idsvcArgv(['serve', ...args]), {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    cwd,
  });
  let stdout = '';
  let stderr = '';
  const watchers = new Set<() => void>();
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    for (const w of watchers) w();
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitFor = (pattern: RegExp, timeoutMs = 180_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = stdout.split('\n').find((l) => pattern.test(l));
        if (line === undefined) return;
        watchers.delete(check);
        clearTimeout(timer);
        resolve(line);
      };
      const timer = setTimeout(() => {
        watchers.delete(check);
        reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; stderr: ${stderr}`));
      }, timeoutMs);
      watchers.add(check);
      // Output may still be in the pipe when the process exits: look once more, a moment later.
      void exited.then(() =>
        setTimeout(() => {
          if (!watchers.has(check)) return;
          watchers.delete(check);
          clearTimeout(timer);
          reject(new Error(`the server exited before printing ${pattern}: ${stderr}`));
        }, 100),
      );
      check();
    });
  // Under --workers the primary prints nothing itself; a worker's log line names the address.
  const listening = await waitFor(/idsvc listening on http:\/\//).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  const url = /idsvc listening on (http:\/\/[^\s"]+)/.exec(listening)![1]!;
  return { child, url, stdout: () => stdout, stderr: () => stderr, exited, waitFor };
}

/** SIGTERM, and the exit code once the server has shut down. */
export async function stopIdsvc(served: ServedIdsvc): Promise<number | null> {
  served.child.kill('SIGTERM');
  return (await served.exited).code;
}

/**
 * Databases and servers that belong to one test file: each server is killed and each database
 * dropped after the file's tests, even when a failed assertion left a server running.
 */
export function servedForThisFile(): { database(prefix: string): TestDatabase; serve(...args: Parameters<typeof serveIdsvc>): Promise<ServedIdsvc> } {
  const databases: TestDatabase[] = [];
  const servers: ServedIdsvc[] = [];
  after(async () => {
    for (const s of servers) s.child.kill('SIGKILL');
    for (const d of databases) await d.drop();
  });
  return {
    database(prefix) {
      const db = testDatabase(prefix);
      databases.push(db);
      return db;
    },
    async serve(...args) {
      const served = await serveIdsvc(...args);
      servers.push(served);
      return served;
    },
  };
}
