// Helpers of the partner area's tests: accounts logged in on the site, an operator made with the
// CLI, an application sent and approved, and the forms of a page read as a browser reads them.
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { SiteClient } from '../site/helpers.js';

export interface Person {
  client: SiteClient;
  userId: string;
  email: string;
  id: number;
}

/** An account (proven unless told otherwise), logged in on its own client. */
export async function person(t: TestApp, userId: string, options: { proven?: boolean } = {}): Promise<Person> {
  const email = `${userId}@example.org`;
  const u = await t.user({ email, userId, proven: options.proven ?? true });
  const client = new SiteClient(t.baseUrl);
  const res = await client.logIn(email, u.password);
  assert.equal(res.status, 303, 'logged in');
  return { client, userId, email, id: u.id };
}

/** An operator, made one with `idsvc user set-role`. */
export async function operator(t: TestApp, userId = 'olivia_op'): Promise<Person> {
  const p = await person(t, userId);
  const r = await runCli(t, ['user', 'set-role', userId, 'operator']);
  assert.equal(r.code, 0, r.stderr);
  return p;
}

/** The CSRF token of the forms on a page. */
export async function csrfOf(client: SiteClient, path: string): Promise<string> {
  const { res, body } = await client.get(path);
  assert.equal(res.status, 200, `${path} answers 200 (${res.status})`);
  const m = /name="_csrf" value="([^"]+)"/.exec(body);
  assert.ok(m, `no CSRF token on ${path}`);
  return m[1]!;
}

/** Posts a form with the token of the page it is on. */
export async function submitOn(client: SiteClient, page: string, action: string, fields: Record<string, string> = {}) {
  return client.post(action, { _csrf: await csrfOf(client, page), ...fields });
}

export const APPLICATION = {
  name: 'Example Forum',
  site_url: 'https://forum.example.com',
  purpose: 'Show the identities members chose to share on their forum profiles.',
  origins: 'https://forum.example.com\nhttps://www.forum.example.com/path',
  contact: 'Ada, ada@forum.example.com',
};

/** Sends the application; returns its id as the applicant's list shows it. */
export async function applyFor(p: Person, fields: Partial<typeof APPLICATION> = {}): Promise<number> {
  const r = await submitOn(p.client, '/partners/apply', '/partners/apply', { ...APPLICATION, ...fields });
  assert.equal(r.res.status, 303, r.body.slice(0, 500));
  const list = await p.client.get('/partners');
  const ids = [...list.body.matchAll(/data-application="(\d+)"/g)].map((m) => Number(m[1]));
  assert.ok(ids.length > 0, 'the application is listed');
  return Math.max(...ids);
}

/** Applies, has the operator approve, and returns the new partner's id. */
export async function approvedPartner(applicant: Person, op: Person, name = APPLICATION.name): Promise<number> {
  const id = await applyFor(applicant, { name });
  const r = await submitOn(op.client, `/console/applications/${id}`, `/console/applications/${id}/approve`);
  assert.equal(r.res.status, 303, r.body.slice(0, 500));
  const page = await applicant.client.get('/partners');
  const m = new RegExp(`href="/partners/(\\d+)">${name}<`).exec(page.body);
  assert.ok(m, 'the applicant sees the partner');
  return Number(m[1]);
}
