#!/usr/bin/env node
// The `idsvc` command (SPEC §13). `npm run idsvc -- …` in a checkout.
import 'dotenv/config';
import { processIo } from './output.js';
import { runIdsvc } from './program.js';

runIdsvc(process.argv.slice(2), processIo()).then((code) => {
  // A command that failed may have left a connection or timer behind (`serve` halfway up): it ends
  // now rather than waiting on them. A command that succeeded ends when its work does, and `serve`
  // keeps the process up.
  if (code !== 0) process.exit(code);
});
