// The project root holds package.json; found by walking up so the same code works from src/
// (run by tsx) and from dist/src/ (compiled).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${start}`);
    dir = parent;
  }
}

export const projectRoot = findRoot(path.dirname(fileURLToPath(import.meta.url)));
