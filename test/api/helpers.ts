// What the partner-API test files share: the hashes a partner sends for an address, the API's error
// document as a test reads it, and an entry the user added on the site.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { findUserByUserId } from '../../src/repositories/users.js';
import { setCentralIdentity } from '../../src/services/central.js';
import type { TestApp } from '../helpers/app.js';

export const md5 = (s: string): string => createHash('md5').update(s).digest('hex');
export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** The answer is the API's XML error document with this status and code (and a message matching). */
export async function expectError(res: Response, status: number, code: string, message?: RegExp): Promise<void> {
  const body = await res.text();
  assert.equal(res.status, status, body);
  assert.equal(XMLValidator.validate(body), true);
  const err = new XMLParser().parse(body).error;
  assert.equal(err.code, code, body);
  if (message) assert.match(String(err.message), message);
}

/** An entry the user added on the site (no partner as its source); its row's id. */
export async function addCentralIdentity(t: TestApp, userId: string, svcId: string, usrSvcId: string): Promise<number> {
  const user = (await findUserByUserId(t.ctx.db, userId))!;
  const svc = (await t.ctx.catalogue.get()).byId.get(svcId)!;
  const { row } = await t.ctx.db.write((tx) => setCentralIdentity(tx, user, svc, usrSvcId, { partnerId: null }, t.clock.now()));
  return row.id;
}
