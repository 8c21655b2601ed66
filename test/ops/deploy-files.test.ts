// The shipped systemd unit is one systemd accepts (docs/deploy.md): `systemd-analyze verify` finds
// nothing to say about it, where the tool exists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../src/paths.js';

const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });

test('deploy/idsvc.service passes systemd-analyze verify', { skip: analyze.status !== 0 && 'systemd-analyze is not installed here' }, () => {
  const verified = spawnSync('systemd-analyze', ['verify', path.join(projectRoot, 'deploy/idsvc.service')], { encoding: 'utf8' });
  assert.equal(verified.status, 0, verified.stderr);
  assert.equal(verified.stderr.trim(), '', 'no warnings');
});
