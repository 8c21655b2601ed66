// docs/deploy.md's /etc/idsvc/idsvc.env works as the page uses it: read by a shell with
// `set -a; . FILE; set +a` (for the CLI), it gives every variable the value meant, without errors;
// its lines keep to what systemd's EnvironmentFile= and dotenv read the same way; and idsvc
// accepts the settings.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import dotenv from 'dotenv';
import { loadConfig } from '../../src/config.js';
import { projectRoot } from '../../src/paths.js';

function envFileOfDeployDoc(): string {
  const page = fs.readFileSync(path.join(projectRoot, 'docs/deploy.md'), 'utf8');
  const from = page.indexOf('Put them in `/etc/idsvc/idsvc.env`');
  assert.ok(from >= 0, 'the page still introduces the env file');
  const block = /```sh\n([\s\S]*?)```/.exec(page.slice(from));
  assert.ok(block, 'the env file follows as a sh block');
  return block[1]!;
}

test("deploy.md's env file, sourced by a shell as the page says, sets each value as meant", () => {
  const text = envFileOfDeployDoc();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-env-'));
  const file = path.join(dir, 'idsvc.env');
  fs.writeFileSync(file, text);
  try {
    const script = 'set -a; . "$1"; set +a; exec node -e "process.stdout.write(JSON.stringify(process.env))"';
    const run = spawnSync('sh', ['-c', script, 'sh', file], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    assert.equal(run.stderr, '');
    assert.equal(run.status, 0);
    const env = JSON.parse(run.stdout) as Record<string, string>;
    const expected = {
      NODE_ENV: 'production',
      BASE_URL: 'https://id.example.org',
      HOST: '127.0.0.1',
      PORT: '8080',
      TRUST_PROXY: '127.0.0.1',
      DATABASE_URL: 'sqlite:/var/lib/idsvc/data/idsvc.sqlite',
      SMTP_URL: 'smtps://smtp.example.org:465',
      SMTP_USER: 'idsvc@example.org',
      SMTP_PASSWORD: '…',
      MAIL_FROM: 'Example ID <no-reply@example.org>',
      SITE_NAME: 'Example ID',
    };
    const set = Object.fromEntries(Object.keys(expected).map((k) => [k, env[k]]));
    assert.deepEqual(set, expected);
    assert.equal(env.REDIS_URL, undefined, 'commented-out settings stay unset');
    // dotenv (a checkout's .env) reads the same values.
    assert.deepEqual(dotenv.parse(text), expected);
    // idsvc takes them.
    const config = loadConfig(expected);
    assert.equal(config.siteName, 'Example ID');
    assert.equal(config.mailFrom, 'Example ID <no-reply@example.org>');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("each line is one that systemd's EnvironmentFile= reads as a shell does: no comment after a value, spaces only in double quotes", () => {
  for (const line of envFileOfDeployDoc().split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    assert.match(line, /^[A-Z][A-Z0-9_]*=("[^"$`\\]*"|[^\s"'#;&<>|$`\\]*)$/, line);
  }
});
