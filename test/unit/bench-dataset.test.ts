// A benchmark working copy (bench/dataset.ts, workingCopy) is made from the dataset's own
// PostgreSQL database, named in its URL: a dataset an older revision built is registered under a
// name of its own (bench/ab-dataset.sh), and its copies must come from it, not from this size's
// usual database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { datasetDatabase } from '../../bench/dataset.js';

test("a dataset's database is the one its URL names, whatever the size's usual name", () => {
  assert.equal(datasetDatabase({ databaseUrl: 'postgres://root@127.0.0.1:5432/idsvc_bench_10000' }), 'idsvc_bench_10000');
  assert.equal(datasetDatabase({ databaseUrl: 'postgres://root@127.0.0.1:5432/idsvc_bench_10000_38b786e' }), 'idsvc_bench_10000_38b786e');
});

test('a name that would not be safe inside CREATE DATABASE … TEMPLATE is refused', () => {
  for (const url of ['postgres://root@127.0.0.1:5432/x;DROP DATABASE y', 'postgres://root@127.0.0.1:5432/', 'postgres://root@127.0.0.1:5432/Bench%20one']) {
    assert.throws(() => datasetDatabase({ databaseUrl: url }), /bad dataset database name/, url);
  }
});
