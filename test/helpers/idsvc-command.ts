// How the tests start the real `idsvc` command: when TEST_BUILT=1 (scripts/test.sh sets it, after
// building dist/ if a source is newer), from the compiled dist/ as an operator runs it, which saves
// tsx's compiling at each start; otherwise from the checkout's TypeScript through tsx.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../../src/paths.js';

const builtEntry = path.join(projectRoot, 'dist/src/cli/main.js');
/** tsx by its file, so that the command may run in any working directory. */
const tsxLoader = pathToFileURL(path.join(projectRoot, 'node_modules/tsx/dist/loader.mjs')).href;

/** The arguments to give `process.execPath` to run `idsvc ...args`. */
export function idsvcArgv(args: string[]): string[] {
  if (process.env.TEST_BUILT === '1') {
    if (!fs.existsSync(builtEntry)) throw new Error('TEST_BUILT=1 but dist/ is not built: run `npm run build` first');
    return [builtEntry, ...args];
  }
  return ['--import', tsxLoader, path.join(projectRoot, 'src/cli/main.ts'), ...args];
}
