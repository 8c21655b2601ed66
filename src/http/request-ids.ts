// The ids of requests (X-Request-Id, the `reqId` of every log line a request writes): unique across
// processes and instances, without a random draw per request. Each process draws 74 random bits
// once, and numbers its requests in the last 48 bits, which no process fills (8,900 years at a
// million requests a second). The number goes out permuted under a key the process draws at start
// (a Feistel network, which maps distinct numbers to distinct numbers), so two ids do not tell a
// client how many requests the process served between them. The id is an RFC 9562 UUID of
// version 8, the version of layouts of one's own, so it stays what the API has always said it
// issues; a random UUID per request allocated several times what the whole id does now.
import { randomBytes, randomFillSync } from 'node:crypto';

const HALF_BITS = 24;
const HALF = 2 ** HALF_BITS;
const HALF_MASK = HALF - 1;
const ROUNDS = 4;
const HALF_ZEROS = '0'.repeat(HALF_BITS / 4);

/** `xxxxxxxx-xxxx-8xxx-Vxxx-`: 74 random bits, the version 8 and the RFC variant (V is 8, 9, a or b). */
function randomPrefix(): string {
  const hex = randomBytes(10).toString('hex');
  const variant = (8 | (Number.parseInt(hex[16]!, 16) & 3)).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-`;
}

const prefix = randomPrefix();
const roundKeys = randomFillSync(new Uint32Array(ROUNDS));
let counter = 0;

/** A round's mixing of one 24-bit half under its key (any function keeps a Feistel network a permutation). */
function mix(half: number, key: number): number {
  let x = Math.imul(half ^ key, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) & HALF_MASK;
}

/**
 * The Feistel network over the halves of a number below 2^48. The low half is taken by subtraction,
 * not `%`: on a number past 2^31 V8 computes `%` as a floating-point remainder (a libm call).
 */
function permuteHalves(n: number): [left: number, right: number] {
  let left = Math.floor(n / HALF);
  let right = n - left * HALF;
  for (let round = 0; round < ROUNDS; round++) {
    const next = left ^ mix(right, roundKeys[round]!);
    left = right;
    right = next;
  }
  return [left, right];
}

/** A bijection of the numbers below 2^48, keyed by this process's round keys. */
export function permute48(n: number): number {
  const [left, right] = permuteHalves(n);
  return left * HALF + right;
}

/** Six hex digits of a 24-bit half: a small integer's hex is quick, a 48-bit double's is not (7 times slower). */
function hex6(half: number): string {
  const hex = half.toString(16);
  return HALF_ZEROS.slice(hex.length) + hex;
}

/** A new request id of this process. */
export function newRequestId(): string {
  const [left, right] = permuteHalves(++counter);
  return prefix + hex6(left) + hex6(right);
}
