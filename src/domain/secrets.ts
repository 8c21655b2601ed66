import { hash, randomInt, timingSafeEqual, randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Uniformly random [a-z0-9] string (randomInt avoids modulo bias). */
export function randomAlnum(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

export const newApiKey = () => randomAlnum(32);
export const newApiToken = () => randomAlnum(40);
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** In one call, which makes no Hash object: every api_token a call carries is hashed before it is compared. */
export function sha256(value: string): string {
  return hash('sha256', value, 'hex');
}

/** Compares two hex digests without leaking where they differ. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
