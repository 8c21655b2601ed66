// An operation's handler reads `call.body` and `call.query` in the types of its own schemas
// (apiOperation(), src/http/api-route.ts): a field the schema lacks, or a value read as the wrong
// type, fails the type check (`npm run typecheck` checks this file). At run time, the schemas the
// routes validate with are the operation's fields plus those every operation accepts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { apiOperation, bodySchema, querySchema, type ApiOperation } from '../../src/http/api-route.js';
import { OPERATIONS } from '../../src/api/index.js';

const probe = apiOperation({
  operationId: 'probe',
  summary: 'probe',
  paths: ['/api/probe/:api_key'],
  body: { note: Type.Optional(Type.String({ maxLength: 10 })), count: Type.Integer() },
  query: { lang: Type.Optional(Type.String({ maxLength: 8 })) },
  tokenRequired: false,
  answer: 'javascript',
  example: { params: { api_key: '$API_KEY' } },
  async handler(call) {
    const note: string | undefined = call.body.note;
    // A GET carries no body: even a field the schema requires may be absent.
    const count: number | undefined = call.body.count;
    const token: string | undefined = call.body.api_token;
    const lang: string | undefined = call.query.lang;
    const format: 'xml' | 'json' | undefined = call.query.format;
    // @ts-expect-error a field the body schema does not have
    void call.body.other;
    // @ts-expect-error a field the query schema does not have
    void call.query.note;
    // @ts-expect-error the schema says number, not string
    const wrong: string | undefined = call.body.count;
    return {
      root: 'result',
      fields: { note: note ?? '', count: String(count), token: token ?? '', lang: lang ?? '', format: format ?? '', wrong: wrong ?? '' },
    };
  },
});

test("the routes validate with the operation's own fields and those every operation accepts", () => {
  const listed: ApiOperation = probe;
  assert.deepEqual(Object.keys(bodySchema(listed).properties), ['api_token', 'note', 'count']);
  assert.deepEqual(bodySchema(listed).required, ['count']);
  assert.deepEqual(Object.keys(querySchema(listed).properties), ['format', 'lang']);
  assert.equal(bodySchema(listed).additionalProperties, false);
  // Every operation's body schema holds api_token beside its own fields.
  for (const op of OPERATIONS) assert.ok('api_token' in bodySchema(op).properties, op.operationId);
});

test('an operation with views lets shared caches keep only calls for its public view', () => {
  // cache: 'public' trusts that every call without proof is answered with the public view; with a
  // profile_type, a legacy_open_reads partner's private view would be kept too.
  const withViews = OPERATIONS.filter((op) => op.query !== undefined && 'profile_type' in op.query);
  assert.deepEqual(withViews.map((op) => op.operationId).sort(), ['return_profile', 'return_services']);
  for (const op of withViews) {
    assert.equal(typeof op.cache, 'function', op.operationId);
    if (typeof op.cache !== 'function') continue;
    assert.equal(op.cache({ params: {}, query: { profile_type: 'public' } }), true, op.operationId);
    assert.equal(op.cache({ params: { profile_type: 'PUBLIC' }, query: {} }), true, op.operationId);
    assert.equal(op.cache({ params: {}, query: {} }), false, `${op.operationId}: the private view is the default`);
    assert.equal(op.cache({ params: {}, query: { profile_type: 'private' } }), false, op.operationId);
  }
});
