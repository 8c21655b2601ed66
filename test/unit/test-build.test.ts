// scripts/build-tests.ts bundles the packages published as hundreds of small modules for the run, and
// the compiled files load those bundles: a package's one instance, in one file per entry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = import.meta.filename;
const runDir = /^(.*\/dist\/test-run-[^/]+)\//.exec(here)?.[1];
const skip = runDir === undefined && 'run through tsx, not compiled by scripts/test.sh';

test('under npm test, Kysely and TypeBox load from the bundles made for the run', { skip }, async () => {
  for (const [specifier, file] of [
    ['kysely', 'kysely/index.mjs'],
    ['@sinclair/typebox', '@sinclair/typebox/index.mjs'],
    ['@sinclair/typebox/value', '@sinclair/typebox/value.mjs'],
  ] as const) {
    assert.equal(fileURLToPath(import.meta.resolve(specifier)), path.join(runDir!, 'node_modules', file), specifier);
  }
  // The entries share TypeBox's module state: a format registered through one is known to the other.
  const { FormatRegistry, Type } = await import('@sinclair/typebox');
  const { Value } = await import('@sinclair/typebox/value');
  FormatRegistry.Set('test-build-one-instance', (v) => v === 'x');
  const schema = Type.String({ format: 'test-build-one-instance' });
  assert.equal(Value.Check(schema, 'x'), true);
  assert.equal(Value.Check(schema, 'y'), false);
});
