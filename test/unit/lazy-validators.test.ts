// The route validators built at first use (src/http/lazy-validators.ts) answer exactly as ajv's own:
// the same verdicts and errors, and nothing compiled before the first call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AjvCompiler } from '@fastify/ajv-compiler';
import { lazyValidators } from '../../src/http/lazy-validators.js';

const options = { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } } as const;
const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 3 } }, required: ['name'] };
const route = (s: unknown, httpPart = 'body') => ({ schema: s, method: 'POST', url: '/x', httpPart }) as never;

test('gives the verdicts and errors of the validator ajv builds for the same schema', () => {
  const lazy = lazyValidators()({}, options)(route(schema));
  const eager = AjvCompiler()({}, options)(route(schema));
  for (const value of [{ name: 'abc' }, { name: 'abcd' }, {}, { name: 7 }, null]) {
    assert.equal(lazy(value), eager(value), JSON.stringify(value));
    assert.deepEqual(lazy.errors, eager.errors, JSON.stringify(value));
  }
  assert.ok(lazy.schemaEnv, 'Fastify passes the parent object to it, as to any ajv validator');
});

test('compiles at the first call: a schema ajv refuses fails then, not when the route is added', () => {
  const validate = lazyValidators()({}, options)(route({ type: 'no-such-type' }));
  assert.throws(() => validate({}), /no-such-type|type/);
});

test('refuses a request headers schema, whose names Fastify would not lowercase for it', () => {
  assert.throws(() => lazyValidators()({}, options)(route({ type: 'object' }, 'headers')), /headers/);
});
