// The CLI loads only what a command needs (src/cli/program.ts): help and argument errors load no
// database driver or server code, so they answer at once; a command that opens the database does
// load them (which shows the check can see them). Each run is a fresh process, whose CommonJS
// module cache tells what was loaded: the compiled command when the suite has built it
// (TEST_BUILT=1, as the other tests that start `idsvc` do), else its TypeScript through tsx.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { projectRoot } from '../../src/paths.js';
import { startTestApp } from '../helpers/app.js';

const HEAVY = ['better-sqlite3', 'pg', 'fastify', 'ioredis', 'nodemailer', 'sharp', 'undici'];
const BUILT = process.env.TEST_BUILT === '1';

/** The heavy packages loaded by running `idsvc ...args` in a new process. */
function loadedBy(args: string[], env: Record<string, string> = {}): string[] {
  const script = `
    import { createRequire } from 'node:module';
    const { runIdsvc } = await import(${JSON.stringify(BUILT ? './dist/src/cli/program.js' : './src/cli/program.ts')});
    const io = { env: process.env, stdin: async () => '', stdout: () => {}, stderr: () => {} };
    await runIdsvc(${JSON.stringify(args)}, io);
    const cache = Object.keys(createRequire(import.meta.url).cache);
    const heavy = ${JSON.stringify(HEAVY)};
    process.stdout.write(JSON.stringify(heavy.filter((p) => cache.some((f) => f.includes('/node_modules/' + p + '/')))));
  `;
  const run = spawnSync(process.execPath, [...(BUILT ? [] : ['--import', 'tsx']), '--input-type=module', '-e', script], {
    cwd: projectRoot,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as string[];
}

test("help, a group's help and a usage error load no database driver or server code", () => {
  assert.deepEqual(loadedBy(['--help']), []);
  assert.deepEqual(loadedBy(['partner', '--help']), []);
  assert.deepEqual(loadedBy(['help', 'user']), []);
  assert.deepEqual(loadedBy(['no-such-command']), []);
});

test('a command that opens the database loads its driver, and not the server', async () => {
  const t = await startTestApp();
  try {
    const loaded = loadedBy(['partner', 'list'], t.cliEnv);
    assert.ok(loaded.includes(t.ctx.db.dialect === 'postgres' ? 'pg' : 'better-sqlite3'), loaded.join(', '));
    assert.ok(!loaded.includes('fastify') && !loaded.includes('sharp'), loaded.join(', '));
  } finally {
    await t.close();
  }
});
