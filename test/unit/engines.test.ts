// `npm ci` on the oldest Node the README supports installs without an engine warning: every package
// in the lockfile that states which Node it runs on accepts that version (and the newest one
// package.json allows). A dependency update that needs a newer Node fails here, not on a user's
// first install. Checked for this machine's system: packages for other systems are not installed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import semver from 'semver';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; os?: string[]; cpu?: string[] }>;
};

test("every locked package's engines accept the Node versions package.json supports", () => {
  const oldest = semver.minVersion(pkg.engines.node);
  assert.ok(oldest, pkg.engines.node);
  assert.equal(oldest.version, '20.19.0', 'the README says Node 20.19 is supported');
  const refusing: string[] = [];
  for (const [where, entry] of Object.entries(lock.packages)) {
    const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (!where || !node) continue;
    // A prebuilt binary for another system (sharp's, esbuild's) is skipped by npm, engines and all.
    if ((entry.os && !entry.os.includes(process.platform)) || (entry.cpu && !entry.cpu.includes(process.arch))) continue;
    for (const version of [oldest.version, '20.20.0', '22.12.0', '24.0.0']) {
      if (!semver.satisfies(version, pkg.engines.node)) continue;
      if (!semver.satisfies(version, node)) refusing.push(`${where}@${entry.version}: node ${node} refuses ${version}`);
    }
  }
  assert.deepEqual(refusing, []);
});
