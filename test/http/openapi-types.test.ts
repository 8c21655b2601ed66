// Issue 16: a partner who runs openapi-typescript on the served document gets a named type for each
// answer shape, and the generated file compiles and describes the real answers (not `never`/`any`).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { startTestApp, type TestApp } from '../helpers/app.js';

const run = promisify(execFile);
const TSC = path.resolve('node_modules/typescript/bin/tsc');

let t: TestApp;
let dir: string;
before(async () => {
  t = await startTestApp();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idsvc-openapi-types-'));
});
after(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

// What a partner's code does with the generated types; each @ts-expect-error fails the compile
// when the type it guards is `any` or `never`, each plain line when it is too narrow.
const USAGE = `import type { components, paths } from './idsvc.js';
type Schemas = components['schemas'];
export const entry: Schemas['UserService'] = { svcId: 'github', svcName: 'GitHub', url: 'https://github.com/a', verified: true, svcFavicon: '' };
// @ts-expect-error verified is a boolean
export const badEntry: Schemas['UserService'] = { svcId: 'github', svcName: 'GitHub', url: '', verified: 'yes', svcFavicon: '' };
export const profile: Schemas['Profile'] = { userId: 'alice', url: 'https://id.example/u/alice', city: 'Lyon' };
// @ts-expect-error userId is required
export const noUser: Schemas['Profile'] = { url: '' };
export const error: Schemas['Error'] = { code: 'rate_limited', message: 'Too many requests' };
// @ts-expect-error codes are a closed list
export const badCode: Schemas['Error'] = { code: 'oops', message: '' };
export const contact: Schemas['Contact'] = { identifier: 'bob@example.org', userId: 'bob', services: [entry] };
export const catalogue: Schemas['Service']['svcLeftURL'] = 'https://github.com/';
export const claim: Schemas['ClaimingUser'] = { userId: 'a', url: '', verified: false };
export const pushed: Schemas['PushedService'] = { svcId: 'github', usrSvcId: 'a' };
type Services = paths['/api/return_services/{api_key}/{user_identifier}']['post'];
export const answer: Services['responses'][200]['content']['application/json'] = { services: [entry] };
export const limited: Services['responses'][429]['content']['application/json'] = { error };
export const form: NonNullable<Services['requestBody']>['content']['application/x-www-form-urlencoded'] = { api_token: 'secret' };
export const widget: paths['/api/service_collection_widget/{api_key}/{user_identifier}/{display_sync}']['get']['responses'][200]['content']['text/javascript'] = 'console.log(1)';
`;

test('openapi-typescript on the served document yields named, usable types that compile', async () => {
  const out = path.join(dir, 'idsvc.ts');
  const generated = astToString(await openapiTS(new URL(`${t.baseUrl}/api/openapi.json`)));
  fs.writeFileSync(out, generated);
  const schemas = /export interface components \{\s*schemas: \{([\s\S]*?)\n {4}\};/.exec(generated);
  assert.ok(schemas, 'components.schemas is an object type, not never');
  for (const name of ['Error', 'Service', 'UserService', 'PushedService', 'Profile', 'Contact', 'ClaimingUser']) {
    assert.match(schemas[1]!, new RegExp(`\\n {8}${name}: \\{`), `components.schemas.${name}`);
  }
  fs.writeFileSync(path.join(dir, 'usage.ts'), USAGE);
  const tsc = await run(
    process.execPath,
    [
      TSC,
      '--noEmit',
      '--strict',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--skipLibCheck',
      out,
      path.join(dir, 'usage.ts'),
    ],
    { timeout: 120_000 },
  ).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? 'tsc failed' }));
  assert.equal(`${tsc.stdout}${tsc.stderr}`, '', 'the generated types and their use compile');
});
