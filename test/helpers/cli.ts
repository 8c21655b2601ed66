// Runs the real `idsvc` command (see idsvc-command.ts for how it is started) against a test app's database,
// with nothing of this process's environment but PATH and HOME, so a test sees what an operator would.
import { spawn } from 'node:child_process';
import { projectRoot } from '../../src/paths.js';
import type { TestApp } from './app.js';
import { idsvcArgv } from './idsvc-command.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(t: Pick<TestApp, 'cliEnv'>, args: string[], { stdin = '', env = {} }: { stdin?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, idsvcArgv(args), {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...t.cliEnv, ...env },
      cwd: projectRoot,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}
