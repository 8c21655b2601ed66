// The ids of requests (X-Request-Id, the `reqId` of every log line a request writes): unique across
// processes and instances, without a random draw per request. Each process draws 74 random bits
// once and counts its requests in the last 48 bits, which no process fills (8,900 years at a
// million requests a second). The id is an RFC 9562 UUID of version 8, the version of layouts of
// one's own, so it stays what the API has always said it issues; a random UUID per request costs
// several times the allocation of the whole id, on every request.
import { randomBytes } from 'node:crypto';

const COUNTER_HEX_DIGITS = 12;
const ZEROS = '0'.repeat(COUNTER_HEX_DIGITS);

/** `xxxxxxxx-xxxx-8xxx-Vxxx-`: 74 random bits, the version 8 and the RFC variant (V is 8, 9, a or b). */
function randomPrefix(): string {
  const hex = randomBytes(10).toString('hex');
  const variant = (8 | (Number.parseInt(hex[16]!, 16) & 3)).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-`;
}

const prefix = randomPrefix();
let counter = 0;

/** A new request id of this process. */
export function newRequestId(): string {
  const count = (++counter).toString(16);
  return prefix + ZEROS.slice(count.length) + count;
}
