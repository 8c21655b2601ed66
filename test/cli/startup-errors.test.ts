// Every start-up failure of `idsvc serve` names the variable to change, in one line on stderr with
// exit code 1: no stack trace, no "migration ? failed", no password. Most cases run the command in
// this process (`runIdsvc`, what main.ts runs); a few start the real process, to see what an
// operator's terminal shows: a failure that reaches main.ts's exit, one that stops a cluster's
// primary, and a start that succeeds.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runIdsvc } from '../../src/cli/program.js';
import { projectRoot } from '../../src/paths.js';
import { PG_URL, startTestApp, type TestApp } from '../helpers/app.js';
import { idsvcArgv } from '../helpers/idsvc-command.js';

let t: TestApp;
let tmp: string;
before(async () => {
  t = await startTestApp();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-startup-'));
});
after(async () => {
  await t.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment `idsvc serve` gets: only this, as an operator's clean shell would give. */
function serveEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', BACKGROUND_JOBS: '0', ...env };
}

/** Runs `idsvc serve` in this process, for a start that fails: it returns once the command has given up. */
async function serve(env: Record<string, string>, args: string[] = []): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runIdsvc(['serve', ...args], {
    env: serveEnv(env),
    stdin: async () => '',
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

/**
 * Runs `idsvc serve` as a process of its own. It should stop by itself; one that is still running
 * once `until` appears on stdout (it started) is stopped with SIGTERM.
 */
function spawnServe(env: Record<string, string>, options: { args?: string[]; until?: RegExp } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, idsvcArgv(['serve', ...(options.args ?? [])]), { env: serveEnv(env), cwd: projectRoot });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (options.until?.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A failure as an operator should see it: exit 1, one `idsvc:` line naming the variable. */
function assertNamed(r: Run, variable: string, what: string): void {
  assert.equal(r.code, 1, `${what}: exit code (stderr: ${r.stderr})`);
  assert.match(r.stderr, /^idsvc: /, what);
  assert.ok(r.stderr.includes(variable), `${what}: ${variable} is named in: ${r.stderr}`);
  assert.ok(!/\n\s+at /.test(r.stderr), `${what}: no stack trace in: ${r.stderr}`);
  assert.ok(!r.stderr.includes('migration ?'), `${what}: ${r.stderr}`);
}

/** A port something else already listens on. */
async function takenPort(): Promise<{ port: number; close(): Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

test('PostgreSQL that cannot be reached or used names DATABASE_URL, without the password', async () => {
  const url = new URL(PG_URL);
  url.password = 'hunter2-secret-pw';
  url.port = '1'; // nothing listens there
  const refused = await spawnServe({ DATABASE_URL: url.toString(), PORT: '0' });
  assertNamed(refused, 'DATABASE_URL', 'connection refused');
  assert.match(refused.stderr, /ECONNREFUSED/);
  assert.ok(!refused.stderr.includes('hunter2-secret-pw'), 'the password is not printed');

  const missing = new URL(PG_URL);
  missing.pathname = '/idsvc_no_such_database';
  const r = await serve({ DATABASE_URL: missing.toString(), PORT: '0' });
  assertNamed(r, 'DATABASE_URL', 'missing database');
  assert.match(r.stderr, /idsvc_no_such_database/);
});

test('an SQLite path that cannot be used names DATABASE_URL', async () => {
  const file = path.join(tmp, 'plain-file');
  fs.writeFileSync(file, 'not a directory');
  const notADatabase = path.join(tmp, 'garbage.sqlite');
  fs.writeFileSync(notADatabase, 'this is not an SQLite database, just text long enough to be read as a header'.repeat(10));
  for (const [where, what] of [
    [path.join(file, 'idsvc.sqlite'), 'a file where a directory should be'],
    [tmp, 'a directory'],
    [notADatabase, 'a file that is not a database'],
  ]) {
    assertNamed(await serve({ DATABASE_URL: `sqlite:${where}`, PORT: '0' }), 'DATABASE_URL', what!);
  }
});

test('an address in use names PORT; one not of this machine or not resolvable names HOST', async () => {
  const taken = await takenPort();
  try {
    const r = await serve({ ...t.cliEnv, PORT: String(taken.port) });
    assertNamed(r, 'PORT', 'port in use');
    assert.match(r.stderr, /already in use/);
    // With several workers the primary stops too, instead of restarting workers that cannot start.
    assertNamed(await spawnServe({ ...t.cliEnv, PORT: String(taken.port) }, { args: ['--workers', '2'] }), 'PORT', 'port in use, two workers');
    // Said before the database is opened or migrated: a new SQLite database is not even created.
    for (const args of [[], ['--workers', '2']]) {
      const file = path.join(tmp, `never-created-${args.length}.sqlite`);
      assertNamed(
        await serve({ ...t.cliEnv, DATABASE_URL: `sqlite:${file}`, PORT: String(taken.port) }, args),
        'PORT',
        `port in use, ${args.join(' ') || 'one process'}, new database`,
      );
      assert.equal(fs.existsSync(file), false, 'nothing was created or migrated');
    }
  } finally {
    await taken.close();
  }
  // 192.0.2.0/24 is documentation space (RFC 5737): never an address of this machine.
  assertNamed(await serve({ ...t.cliEnv, PORT: '0', HOST: '192.0.2.1' }), 'HOST', 'foreign address');
  assertNamed(await serve({ ...t.cliEnv, PORT: '0', HOST: 'no-such-host.invalid' }), 'HOST', 'unresolvable name');
  assertNamed(await serve({ ...t.cliEnv, PORT: '0', HOST: '1.2.3.4.5' }), 'HOST', 'not an address');
});

test('a METRICS_PORT in use names METRICS_PORT', async () => {
  const taken = await takenPort();
  try {
    assertNamed(await serve({ ...t.cliEnv, PORT: '0', METRICS_PORT: String(taken.port) }), 'METRICS_PORT', 'metrics port in use');
  } finally {
    await taken.close();
  }
});

test('TRUST_PROXY=off, the documented default, starts; a bad value names TRUST_PROXY', async () => {
  const started = await spawnServe({ ...t.cliEnv, PORT: '0', TRUST_PROXY: 'off' }, { until: /idsvc listening on http:\/\/127\.0\.0\.1:\d+/ });
  assert.match(started.stdout, /idsvc listening on/, started.stderr);
  assert.equal(started.stderr, '');
  assertNamed(await serve({ ...t.cliEnv, PORT: '0', TRUST_PROXY: 'sometimes' }), 'TRUST_PROXY', 'bad TRUST_PROXY');
});

test('a proof providers file with a bad entry stops start-up in one line naming PROOF_PROVIDERS and the entry', async () => {
  const shipped = JSON.parse(fs.readFileSync(path.join(projectRoot, 'catalogue/proofs.json'), 'utf8')) as {
    providers: { id: string; fetch: { url: string } }[];
  };
  shipped.providers[1]!.fetch.url = 'https://example.org/{nobody}';
  const file = path.join(tmp, 'proofs.json');
  fs.writeFileSync(file, JSON.stringify(shipped));
  const r = await serve({ ...t.cliEnv, PORT: '0', PROOF_PROVIDERS: file });
  assertNamed(r, 'PROOF_PROVIDERS', 'a template naming an unknown variable');
  assert.ok(r.stderr.includes(`providers[1] ("${shipped.providers[1]!.id}")`), r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  assertNamed(
    await serve({
      ...t.cliEnv,
      IDSVC_TEST_ARGON2_MINIMUM: '',
      PORT: '0',
      NODE_ENV: 'production',
      IDSVC_TEST_PROOF_ORIGINS: 'https://api.github.com=http://127.0.0.1:1',
    }),
    'IDSVC_TEST_PROOF_ORIGINS',
    'test origins in production',
  );
});
