// Code comments say why, not the history of how the code came to be: an issue number tells a reader
// nothing the code and its docs do not, and goes stale as soon as the issue is closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/paths.js';

const ROOTS = ['src', 'widget/src', 'packages/client/src', 'scripts', 'bench'];
const CODE = /\.(ts|tsx|js|mjs|sh)$/;

function files(dir: string): string[] {
  return fs.readdirSync(path.join(projectRoot, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'data' || e.name === 'node_modules' ? [] : files(rel);
    return CODE.test(e.name) ? [rel] : [];
  });
}

test('no code comment cites an issue number', () => {
  const all = ROOTS.flatMap((r) => files(r));
  assert.ok(all.length > 100, `only ${all.length} files found`);
  const found: string[] = [];
  for (const file of all) {
    fs.readFileSync(path.join(projectRoot, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        // The comment part of the line: after `//` (not in a URL), or a line of a block comment or shell comment.
        const at = /^\s*(\*|\/\*|#)/.test(line) ? 0 : line.search(/(?<![:'"])\/\//);
        if (at >= 0 && /\bissues? \d/i.test(line.slice(at))) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, []);
});
