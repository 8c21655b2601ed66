// Runs the `idsvc` command against a test app's database, with nothing of this process's environment
// but PATH and HOME, so a test sees what an operator would. `runCli` runs it in this process
// (`runIdsvc`, the same program main.ts runs); `spawnCli` starts the real command (see
// idsvc-command.ts), which test/cli/spawned.test.ts does once per command group.
import { spawn } from 'node:child_process';
import { runIdsvc } from '../../src/cli/program.js';
import { projectRoot } from '../../src/paths.js';
import type { TestApp } from './app.js';
import { idsvcArgv } from './idsvc-command.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  stdin?: string;
  env?: Record<string, string>;
}

function cliEnv(t: Pick<TestApp, 'cliEnv'>, env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...t.cliEnv, ...env };
}

export async function runCli(t: Pick<TestApp, 'cliEnv'>, args: string[], { stdin = '', env = {} }: CliOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runIdsvc(args, {
    env: cliEnv(t, env),
    stdin: async () => stdin,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

export function spawnCli(t: Pick<TestApp, 'cliEnv'>, args: string[], { stdin = '', env = {} }: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, idsvcArgv(args), { env: cliEnv(t, env), cwd: projectRoot });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}
