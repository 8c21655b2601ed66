// Seeded random draws for the benchmark's request pools: the same seed gives the same requests, so
// two runs (or two servers in one run) can be offered exactly the same traffic.

/** mulberry32: a small, fast 32-bit generator; ample for choosing users, not for anything secret. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Ranks 1..n drawn with probability proportional to 1 / rank^s (Zipf). The cumulative weights are
 * computed once (8 bytes a rank: 8 MB for 1 M users) and each draw is a binary search over them,
 * O(log n), so a pool of 100,000 draws over 1 M users takes milliseconds.
 */
export class ZipfSampler {
  private readonly cumulative: Float64Array;

  constructor(
    readonly n: number,
    readonly s = 1,
  ) {
    if (!Number.isInteger(n) || n < 1) throw new Error('a Zipf distribution needs at least one rank');
    this.cumulative = new Float64Array(n);
    let total = 0;
    for (let k = 1; k <= n; k++) {
      total += 1 / k ** s;
      this.cumulative[k - 1] = total;
    }
  }

  /** A rank in 1..n, from a uniform draw in [0, 1). */
  rank(uniform: number): number {
    const target = uniform * this.cumulative[this.n - 1]!;
    let lo = 0;
    let hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cumulative[mid]! > target) hi = mid;
      else lo = mid + 1;
    }
    return lo + 1;
  }
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * A fixed permutation of 1..n that spreads ranks over the dataset: without it the most-read people
 * would be users 1, 2, 3…, whose rows sit side by side in every table and share pages, which real
 * popular people do not. Multiplying by a stride coprime with n visits every user exactly once.
 */
export function rankToUser(rank: number, n: number): number {
  let stride = 2654435761 % n || 1;
  while (gcd(stride, n) !== 1) stride++;
  return (((((rank - 1) * stride) % n) + 7) % n) + 1;
}
