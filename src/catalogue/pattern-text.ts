// What a service's name pattern (regexCheck) allows, in words a person can act on. Shared with the
// widget bundle, so both say the same. Read by a small hand-written parser rather than by regexes:
// it walks the pattern once, and gives up (null) on anything it does not fully understand, since a
// sentence that describes a pattern wrongly is worse than an example.
import { matchesPattern } from './profile-url.js';

interface CharClass {
  lower: boolean;
  upper: boolean;
  digits: 'all' | 'nonzero' | 'none';
  others: string[];
}

interface Atom {
  cls: CharClass;
  min: number;
  max: number | null;
}

function emptyClass(): CharClass {
  return { lower: false, upper: false, digits: 'none', others: [] };
}

/** Parses `[...]` or `\w` at `pos`; returns the class and the position after it, or null. */
function parseClass(p: string, pos: number): [CharClass, number] | null {
  const cls = emptyClass();
  if (p.startsWith('\\w', pos)) {
    return [{ lower: true, upper: true, digits: 'all', others: ['_'] }, pos + 2];
  }
  if (p[pos] !== '[' || p[pos + 1] === '^') return null;
  let i = pos + 1;
  while (i < p.length && p[i] !== ']') {
    const range = p.slice(i, i + 3);
    if (range === 'a-z') cls.lower = true;
    else if (range === 'A-Z') cls.upper = true;
    else if (range === '0-9') cls.digits = 'all';
    else if (range === '1-9') cls.digits = cls.digits === 'all' ? 'all' : 'nonzero';
    else {
      const ch = p[i] as string;
      if (ch === '\\') {
        const next = p[i + 1];
        if (next === 'w') {
          cls.lower = cls.upper = true;
          cls.digits = 'all';
          cls.others.push('_');
        } else if (next === 'd') cls.digits = 'all';
        else if (next !== undefined && '.-_@+/'.includes(next)) cls.others.push(next);
        else return null;
        i += 2;
        continue;
      }
      // A dash between two other characters is a range this reader does not know.
      if (p[i + 1] === '-' && p[i + 2] !== ']' && p[i + 2] !== undefined) return null;
      cls.others.push(ch);
      i += 1;
      continue;
    }
    i += 3;
  }
  if (p[i] !== ']') return null;
  return [cls, i + 1];
}

/** Parses the quantifier at `pos` (none, `+`, `*`, `{m,n}`, `{m,}`). */
function parseQuantifier(p: string, pos: number): [number, number | null, number] | null {
  const c = p[pos];
  if (c === '+') return [1, null, pos + 1 + (p[pos + 1] === '?' ? 1 : 0)];
  if (c === '*') return [0, null, pos + 1 + (p[pos + 1] === '?' ? 1 : 0)];
  if (c !== '{') return [1, 1, pos];
  const end = p.indexOf('}', pos);
  if (end < 0 || end - pos > 12) return null;
  const [lo = '', hi] = p.slice(pos + 1, end).split(',');
  const min = Number.parseInt(lo, 10);
  if (!Number.isInteger(min) || String(min) !== lo) return null;
  if (hi === undefined) return [min, min, end + 1];
  if (hi === '') return [min, null, end + 1];
  const max = Number.parseInt(hi, 10);
  if (!Number.isInteger(max) || String(max) !== hi) return null;
  return [min, max, end + 1];
}

const OTHER_NAMES: Record<string, string> = {
  _: 'underscores (_)',
  '-': 'hyphens (-)',
  '.': 'dots (.)',
  '@': '@',
  '+': 'plus signs (+)',
  ' ': 'spaces',
  '/': 'slashes (/)',
};

function list(words: string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

function classWords(cls: CharClass): string | null {
  const words: string[] = [];
  if (cls.lower && cls.upper) words.push('letters (a–z)');
  else if (cls.lower) words.push('lowercase letters (a–z)');
  else if (cls.upper) words.push('capital letters (A–Z)');
  if (cls.digits === 'all') words.push('digits');
  else if (cls.digits === 'nonzero') words.push('digits 1–9');
  for (const o of new Set(cls.others)) {
    const name = OTHER_NAMES[o];
    if (name === undefined) return null;
    words.push(name);
  }
  return words.length > 0 ? list(words) : null;
}

function lengthWords(min: number, max: number | null): string {
  if (max === null) return min > 1 ? `, at least ${min} characters` : '';
  if (min === max) return `, exactly ${min} characters`;
  if (min <= 1) return `, at most ${max} characters`;
  return `, ${min} to ${max} characters`;
}

/**
 * A sentence saying what names the pattern accepts ("only letters (a–z), digits and hyphens (-), at
 * most 39 characters"), or null when the pattern is more than one or two character classes with
 * lengths between `^` and `$`.
 */
export function describePattern(regexCheck: string): string | null {
  const p = regexCheck;
  if (p.length > 200 || !p.startsWith('^') || !p.endsWith('$') || p.endsWith('\\$')) return null;
  const atoms: Atom[] = [];
  let pos = 1;
  const end = p.length - 1;
  while (pos < end) {
    let cls: [CharClass, number] | null = parseClass(p, pos);
    // A group around one class, as in ^([a-z]){1,15}$, reads the same.
    if (!cls && p[pos] === '(' && p[pos + 1] !== '?') {
      const inner = parseClass(p, pos + 1);
      if (inner && p[inner[1]] === ')') cls = [inner[0], inner[1] + 1];
    }
    if (!cls) return null;
    const q = parseQuantifier(p, cls[1]);
    if (!q) return null;
    atoms.push({ cls: cls[0], min: q[0], max: q[1] });
    pos = q[2];
  }
  if (pos !== end || atoms.length === 0 || atoms.length > 2) return null;
  if (atoms.length === 1) {
    const [only] = atoms as [Atom];
    const words = classWords(only.cls);
    return words === null ? null : `only ${words}${lengthWords(only.min, only.max)}`;
  }
  // Two atoms: a first character of one kind, then the rest.
  const [first, rest] = atoms as [Atom, Atom];
  if (first.min !== 1 || first.max !== 1) return null;
  const firstWords = classWords(first.cls);
  const restWords = classWords(rest.cls);
  if (firstWords === null || restWords === null) return null;
  const total = lengthWords(rest.min + 1, rest.max === null ? null : rest.max + 1);
  return `only ${restWords}, starting with one of ${firstWords}${total}`;
}

// Names tried, in order, for an example the pattern accepts when it cannot be put in words.
const EXAMPLES = ['alice', 'alice_smith', 'alice-smith', 'alice.smith', 'alice123', 'Alice', 'alicesmith1', 'a1b2c3d4', 'alice@example.org', 'alice smith'];

/** A name the pattern accepts, from a short fixed list, or null when none of them fits. */
export function examplePassing(regexCheck: string): string | null {
  return EXAMPLES.find((e) => matchesPattern(regexCheck, e)) ?? null;
}

/**
 * What to tell a person whose name the pattern refused: the rule in words, else an example that
 * passes, else only that the name does not fit.
 */
export function patternAdvice(regexCheck: string, svcName: string): string {
  const words = describePattern(regexCheck);
  if (words !== null) return `Names on ${svcName} use ${words}.`;
  const example = examplePassing(regexCheck);
  if (example !== null) return `Names on ${svcName} look like “${example}”.`;
  return `That is not the form names on ${svcName} take.`;
}
