import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.js';
import { timeoutOptions } from '../../src/http/connections.js';
import { projectRoot } from '../../src/paths.js';
import { idsvcArgv } from '../helpers/idsvc-command.js';

test('defaults: 127.0.0.1:8080 on SQLite under ./data', () => {
  const c = loadConfig({});
  assert.equal(c.port, 8080);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.baseUrl, 'http://127.0.0.1:8080');
  assert.equal(c.databaseUrl, `sqlite:${path.join(projectRoot, 'data', 'idsvc.sqlite')}`);
  assert.equal(c.redisUrl, null);
  assert.equal(c.redisTimeoutMs, 500);
  assert.equal(loadConfig({ REDIS_TIMEOUT_MS: '2000' }).redisTimeoutMs, 2000);
  assert.equal(c.fetchAllowPrivate, false);
  assert.equal(c.sqliteCheckpointMs, 25);
  assert.equal(loadConfig({ SQLITE_CHECKPOINT_MS: '0' }).sqliteCheckpointMs, 0);
  assert.equal(c.databaseTimeoutMs, 5000);
  assert.equal(loadConfig({ DATABASE_TIMEOUT_MS: '1500' }).databaseTimeoutMs, 1500);
  assert.ok(Object.isFrozen(c));
  assert.deepEqual([c.headersTimeoutMs, c.requestTimeoutMs, c.keepAliveTimeoutMs, c.connectionsPerAddress], [10_000, 30_000, 5_000, 100]);
  assert.equal(loadConfig({ CONNECTIONS_PER_ADDRESS: '0' }).connectionsPerAddress, 0);
  assert.equal(c.demo, false);
  assert.equal(loadConfig({ IDSVC_DEMO: '1' }).demo, true);
  assert.throws(() => loadConfig({ IDSVC_DEMO: 'maybe' }), /IDSVC_DEMO/);
});

test('mail: .eml files under ./data/mail unless SMTP_URL names a relay; From names the site', () => {
  const c = loadConfig({});
  assert.equal(c.smtpUrl, null);
  assert.equal(c.mailDir, path.join(projectRoot, 'data', 'mail'));
  assert.equal(c.siteName, 'idsvc');
  assert.equal(c.mailFrom, '"idsvc" <no-reply@localhost>');
  const s = loadConfig({
    SMTP_URL: 'smtps://relay.example.org:465',
    SMTP_USER: 'me',
    SMTP_PASSWORD: ' pass ',
    BASE_URL: 'https://ids.example.org',
    SITE_NAME: 'Ids',
  });
  assert.equal(s.smtpUrl, 'smtps://relay.example.org:465');
  assert.equal(s.smtpPassword, ' pass ', 'a password is taken as given');
  assert.equal(s.mailFrom, '"Ids" <no-reply@ids.example.org>');
  assert.equal(loadConfig({ MAIL_FROM: 'Team <team@example.org>' }).mailFrom, 'Team <team@example.org>');
});

test("passwords are hashed at the SPEC's cost unless a test suite asks for the lowest, which production refuses (above)", () => {
  assert.equal(loadConfig({}).argon2Cost, 'spec');
  assert.equal(loadConfig({ NODE_ENV: 'production' }).argon2Cost, 'spec');
  assert.equal(loadConfig({ IDSVC_TEST_ARGON2_MINIMUM: '0', NODE_ENV: 'production' }).argon2Cost, 'spec');
  assert.equal(loadConfig({ IDSVC_TEST_ARGON2_MINIMUM: '1' }).argon2Cost, 'test-minimum');
});

test('every bad value names its variable', () => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ BASE_URL: 'ftp://x' }, 'BASE_URL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'sqlite:' }, 'DATABASE_URL'],
    [{ DATABASE_SCHEMA: 'Robert; DROP' }, 'DATABASE_SCHEMA'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ FETCH_ALLOW_PRIVATE: 'maybe' }, 'FETCH_ALLOW_PRIVATE'],
    [{ TOKEN_GRACE_SECONDS: '-1' }, 'TOKEN_GRACE_SECONDS'],
    [{ WEBHOOK_SECRET_GRACE_SECONDS: 'a day' }, 'WEBHOOK_SECRET_GRACE_SECONDS'],
    [{ PARTNER_CACHE: 'sometimes' }, 'PARTNER_CACHE'],
    [{ ANSWER_CACHE_MB: 'lots' }, 'ANSWER_CACHE_MB'],
    [{ ANSWER_CACHE_MB: '-1' }, 'ANSWER_CACHE_MB'],
    [{ USAGE_COUNTING: 'often' }, 'USAGE_COUNTING'],
    [{ USAGE_FLUSH_SECONDS: '0' }, 'USAGE_FLUSH_SECONDS'],
    [{ USAGE_FLUSH_SECONDS: '3601' }, 'USAGE_FLUSH_SECONDS'],
    [{ SQLITE_CHECKPOINT_MS: '100000' }, 'SQLITE_CHECKPOINT_MS'],
    [{ DATABASE_TIMEOUT_MS: '0' }, 'DATABASE_TIMEOUT_MS'],
    [{ DATABASE_TIMEOUT_MS: 'soon' }, 'DATABASE_TIMEOUT_MS'],
    [{ SMTP_URL: 'http://mail.example.org' }, 'SMTP_URL'],
    [{ SMTP_URL: 'mail.example.org:587' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://relay.example.org', SMTP_USER: 'me' }, 'SMTP_PASSWORD'],
    [{ SMTP_URL: 'smtp://relay.example.org', SMTP_PASSWORD: 'secret' }, 'SMTP_USER'],
    [{ SMTP_USER: 'me', SMTP_PASSWORD: 'secret' }, 'SMTP_URL'],
    [{ MAIL_FROM: 'a@example.org, b@example.org' }, 'MAIL_FROM'],
    [{ MAIL_FROM: 'nobody' }, 'MAIL_FROM'],
    [{ SITE_NAME: 'x'.repeat(65) }, 'SITE_NAME'],
    [{ HEADERS_TIMEOUT_MS: '50' }, 'HEADERS_TIMEOUT_MS'],
    [{ HEADERS_TIMEOUT_MS: '40000' }, 'HEADERS_TIMEOUT_MS'],
    [{ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' }, 'HEADERS_TIMEOUT_MS'],
    [{ REQUEST_TIMEOUT_MS: 'long' }, 'REQUEST_TIMEOUT_MS'],
    [{ KEEP_ALIVE_TIMEOUT_MS: '0' }, 'KEEP_ALIVE_TIMEOUT_MS'],
    [{ REDIS_TIMEOUT_MS: '5' }, 'REDIS_TIMEOUT_MS'],
    [{ CONNECTIONS_PER_ADDRESS: '-1' }, 'CONNECTIONS_PER_ADDRESS'],
    [{ IDSVC_TEST_ARGON2_MINIMUM: 'cheap' }, 'IDSVC_TEST_ARGON2_MINIMUM'],
    [{ IDSVC_TEST_ARGON2_MINIMUM: '1', NODE_ENV: 'production' }, 'IDSVC_TEST_ARGON2_MINIMUM'],
  ];
  for (const [env, name] of cases) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && e.variable === name && e.message.includes(name),
      name,
    );
  }
});

test('start-up with a bad value stops with a message naming the variable', () => {
  const r = spawnSync(process.execPath, idsvcArgv(['serve']), {
    env: { PATH: process.env.PATH ?? '', PORT: 'eighty' },
    cwd: projectRoot,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /PORT must be a whole number/);
});

test('a connection idle while its answer waits for the database outlasts that wait', () => {
  const idle = (env: Record<string, string>) => timeoutOptions(loadConfig(env)).connectionTimeout;
  assert.equal(idle({}), 30_000);
  assert.equal(idle({ REQUEST_TIMEOUT_MS: '45000' }), 45_000);
  // A database wait of 60 s answers `unavailable` at 60 s: the connection must still be there then.
  assert.equal(idle({ DATABASE_TIMEOUT_MS: '60000' }), 65_000);
});

test('verification: DNS servers as ip[:port], the DID directory replaceable only outside production', () => {
  const c = loadConfig({});
  assert.deepEqual(c.dnsServers, []);
  assert.equal(c.plcDirectoryUrl, 'https://plc.directory');
  assert.equal(c.verifyConfirmAfterMs, 3_600_000);
  assert.equal(c.verifyHostRequestsPerMinute, 30);
  assert.deepEqual(loadConfig({ DNS_SERVERS: '127.0.0.1:5353, [::1]:53,10.0.0.2' }).dnsServers, ['127.0.0.1:5353', '[::1]:53', '10.0.0.2']);
  for (const bad of ['dns.example:53', '127.0.0.1:99999', '127.0.0.1;8.8.8.8']) {
    assert.throws(
      () => loadConfig({ DNS_SERVERS: bad }),
      (e: unknown) => e instanceof ConfigError && e.variable === 'DNS_SERVERS',
      bad,
    );
  }
  assert.equal(loadConfig({ PLC_DIRECTORY_URL: 'http://127.0.0.1:2582/' }).plcDirectoryUrl, 'http://127.0.0.1:2582');
  assert.throws(
    () => loadConfig({ PLC_DIRECTORY_URL: 'http://127.0.0.1:2582', NODE_ENV: 'production' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'PLC_DIRECTORY_URL',
  );
  assert.throws(
    () => loadConfig({ PLC_DIRECTORY_URL: 'ftp://x' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'PLC_DIRECTORY_URL',
  );
});
