// The benchmark reports the share of the service's answer cache lookups answered from memory in each
// round (bench/measure.ts, hitShare), read from the service's own /metrics (bench/processes.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { hitShare } from '../../bench/measure.js';
import { answerCacheLookups, parseAnswerCacheLookups } from '../../bench/processes.js';
import { startTestApp } from '../helpers/app.js';

const TOKEN = 'bench-cache-hits-token-0123456789';

test('the lookups are read off a real service: a person asked for twice is one miss, then one hit', async () => {
  const t = await startTestApp({ METRICS_TOKEN: TOKEN });
  try {
    const P = await t.partner();
    await t.user({ email: 'hana@example.org', userId: 'hana', optedIn: true });
    const server = { label: 'idsvc', child: {} as ChildProcess, url: t.baseUrl, heapFile: null, metricsToken: TOKEN };
    const before = await answerCacheLookups(server);
    assert.ok(before, 'the counts are on /metrics');
    for (let i = 0; i < 2; i++) assert.equal((await fetch(`${t.baseUrl}/api/return_services/${P.apiKey}/hana/public`)).status, 200);
    const after = await answerCacheLookups(server);
    assert.deepEqual({ hits: after!.hits - before.hits, misses: after!.misses - before.misses }, { hits: 1, misses: 1 });
    assert.equal(hitShare(before, after), 0.5);
    // A reference server has no token, and a wrong one reads nothing.
    assert.equal(await answerCacheLookups({ ...server, metricsToken: null }), null);
    assert.equal(await answerCacheLookups({ ...server, metricsToken: 'not-the-token-of-this-service' }), null);
  } finally {
    await t.close();
  }
});

test('the share of a round: its own lookups only, none when it made none or was not read', () => {
  assert.equal(hitShare({ hits: 100, misses: 50 }, { hits: 400, misses: 150 }), 0.75);
  assert.equal(hitShare({ hits: 3, misses: 4 }, { hits: 3, misses: 4 }), null);
  assert.equal(hitShare(null, { hits: 3, misses: 4 }), null);
  assert.equal(parseAnswerCacheLookups('# HELP something\nidsvc_other 1\n'), null);
  assert.deepEqual(parseAnswerCacheLookups('idsvc_answer_cache_lookups{outcome="hit"} 7\nidsvc_answer_cache_lookups{outcome="miss"} 12\n'), {
    hits: 7,
    misses: 12,
  });
});
