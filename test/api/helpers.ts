// What the partner-API test files share: the hash a partner sends for an address, and the API's
// error document as a test reads it.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

export const md5 = (s: string): string => createHash('md5').update(s).digest('hex');

/** The answer is the API's XML error document with this status and code (and a message matching). */
export async function expectError(res: Response, status: number, code: string, message?: RegExp): Promise<void> {
  const body = await res.text();
  assert.equal(res.status, status, body);
  assert.equal(XMLValidator.validate(body), true);
  const err = new XMLParser().parse(body).error;
  assert.equal(err.code, code, body);
  if (message) assert.match(String(err.message), message);
}
