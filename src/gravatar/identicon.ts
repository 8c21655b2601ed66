// Gravatar's `d=identicon`: a symmetric 5 × 5 pattern in one colour, drawn from the identifier in the
// URL and from nothing else, so the pattern of an address tells nothing about whether it has an
// account, and one address always gets the same pattern.
import { createHash } from 'node:crypto';

const GRID = 5;

function hslToHex(h: number, s: number, l: number): string {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return `#${[f(0), f(8), f(4)]
    .map((x) =>
      Math.round(x * 255)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}

/** The identicon of an identifier as given (hash or userId, compared lower-cased), `size` pixels square. */
export function identiconSvg(identifier: string, size: number): string {
  const bytes = createHash('md5').update(identifier.trim().toLowerCase()).digest();
  const colour = hslToHex(((bytes[0]! << 8) | bytes[1]!) % 360, 0.55, 0.5);
  const cells: string[] = [];
  // The left three columns from the bits of the digest, mirrored onto the right two.
  for (let col = 0; col < 3; col++) {
    for (let row = 0; row < GRID; row++) {
      const bit = col * GRID + row;
      if (((bytes[2 + (bit >> 3)]! >> (bit & 7)) & 1) === 0) continue;
      for (const x of new Set([col, GRID - 1 - col])) cells.push(`<rect x="${10 + x * 16}" y="${10 + row * 16}" width="16" height="16"/>`);
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 100 100" role="img" aria-label="Identicon"><rect width="100" height="100" fill="#f0f0f0"/><g fill="${colour}">${cells.join('')}</g></svg>`;
}

/** Gravatar's `d=blank`: a transparent square. */
export function blankSvg(size: number): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 100 100" role="img" aria-label="No avatar"></svg>`;
}
