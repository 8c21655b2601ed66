// Every regular expression in the code (src/, widget/src, packages/client/src), in the shipped
// catalogue's patterns and in the proof providers' (catalogue/proofs.json) goes through recheck, a
// ReDoS checker: one it finds exponential or polynomial (like /\/+$/ on a run of slashes that does
// not end the text) must be replaced, or carry a comment `regex-safe: <why>` on its line or the line
// before, saying why its input cannot make it slow.
// Catalogue patterns (from Sherlock's list, editable by operators) cannot carry comments: they only
// ever test an identifier of at most 1,024 characters, so a polynomial one passes when recheck's own
// attack string, pumped to that length, still costs under 20 ms; an exponential one never passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { checkSync, type Diagnostics } from 'recheck';
import ts from 'typescript';
import { projectRoot } from '../../src/paths.js';

const ROOT = projectRoot;
const SOURCE_DIRS = ['src', 'widget/src', 'packages/client/src'];
const MARKER = 'regex-safe:';

interface FoundRegex {
  where: string;
  source: string;
  flags: string;
  /** The author's reason, when the line or the one before says why it is safe. */
  marked: boolean;
  /** Only ever applied to at most LONGEST_IDENTIFIER characters (catalogue patterns). */
  bounded?: boolean;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.(ts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** Regex literals and `new RegExp('…')` / `RegExp('…')` with literal arguments in one file. */
export function regexesIn(file: string, text: string): FoundRegex[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const lines = text.split('\n');
  const found: FoundRegex[] = [];
  const add = (node: ts.Node, source: string, flags: string) => {
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
    const marked = [lines[line] ?? '', lines[line - 1] ?? ''].some((l) => l.includes(MARKER));
    found.push({ where: `${file}:${line + 1}`, source, flags, marked });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isRegularExpressionLiteral(node)) {
      const slash = node.text.lastIndexOf('/');
      add(node, node.text.slice(1, slash), node.text.slice(slash + 1));
    } else if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && ts.isIdentifier(node.expression) && node.expression.text === 'RegExp') {
      const [source, flags] = node.arguments ?? [];
      if (source && ts.isStringLiteralLike(source)) add(node, source.text, flags && ts.isStringLiteralLike(flags) ? flags.text : '');
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** The longest identifier a catalogue pattern is applied to (update_service's usrSvcId, the account page's field). */
const LONGEST_IDENTIFIER = 1024;

/** CPU milliseconds the pattern takes on recheck's attack for it, pumped to the longest identifier. */
function attackCost(r: FoundRegex, d: Extract<Diagnostics, { status: 'vulnerable' }>): number {
  const { pumps, suffix } = d.attack;
  const fixed = pumps.reduce((n, p) => n + p.prefix.length, suffix.length);
  const pumpLength = pumps.reduce((n, p) => n + p.pump.length, 0);
  const times = Math.max(1, Math.floor((LONGEST_IDENTIFIER - fixed) / Math.max(1, pumpLength)));
  const attack = `${pumps.map((p) => p.prefix + p.pump.repeat(times)).join('')}${suffix}`.slice(0, LONGEST_IDENTIFIER);
  const re = new RegExp(r.source, r.flags);
  const before = process.cpuUsage();
  re.test(attack);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

function catalogueRegexes(): FoundRegex[] {
  const file = 'catalogue/services.json';
  const { services } = JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as { services: { svcId: string; regexCheck: string | null }[] };
  return services
    .filter((s) => s.regexCheck !== null)
    .map((s) => ({ where: `${file} (${s.svcId})`, source: s.regexCheck!, flags: '', marked: false, bounded: true }));
}

/** The proof providers' patterns (catalogue/proofs.json): applied to profile and proof addresses. */
function proofRegexes(): FoundRegex[] {
  const file = 'catalogue/proofs.json';
  const { providers } = JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as {
    providers: { id: string; profileUrl?: string; proofUrl?: { pattern: string } }[];
  };
  return providers.flatMap((p) =>
    [p.profileUrl, p.proofUrl?.pattern]
      .filter((s): s is string => s !== undefined)
      .map((source) => ({ where: `${file} (${p.id})`, source, flags: '', marked: false })),
  );
}

/** Verdicts by flags and source: many patterns recur (the catalogue's most of all), and each is a whole analysis by recheck. */
const verdicts = new Map<string, Diagnostics>();

function verdict(r: FoundRegex): Diagnostics {
  const key = `${r.flags}/${r.source}`;
  let d = verdicts.get(key);
  if (d === undefined) {
    d = checkSync(r.source, r.flags, { timeout: 10_000 });
    verdicts.set(key, d);
  }
  return d;
}

function unsafe(found: FoundRegex[]): string[] {
  const out: string[] = [];
  for (const r of found) {
    const d = verdict(r);
    if (d.status !== 'vulnerable' || r.marked) continue;
    if (r.bounded && d.complexity.type === 'polynomial' && attackCost(r, d) < 20) continue;
    out.push(`${r.where}: /${r.source}/${r.flags} is ${d.complexity.summary}`);
  }
  return out;
}

test('the check catches an unsafe regex applied to input', () => {
  const code = 'export const trailing = (s: string) => /(a+)+$/.test(s);\nexport const slashes = (s: string) => s.replace(/\\/+$/, "");\n';
  const found = regexesIn('example.ts', code);
  assert.equal(found.length, 2);
  assert.deepEqual(unsafe(found).length, 2, 'both are flagged');
  const explained = regexesIn('example.ts', `// ${MARKER} the input is one character\n${code.split('\n')[0]}\n`);
  assert.deepEqual(unsafe(explained), [], 'a reason on the line before accepts it');
});

test('no regex in the code or the catalogue is exponential or polynomial unless a comment says why it is safe', () => {
  const found = SOURCE_DIRS.flatMap((dir) => sourceFiles(dir)).flatMap((file) => regexesIn(file, fs.readFileSync(path.join(ROOT, file), 'utf8')));
  assert.ok(found.length > 50, `${found.length} regexes found in the code`);
  const catalogue = catalogueRegexes();
  const proofs = proofRegexes();
  assert.ok(proofs.length >= 8, `${proofs.length} proof provider patterns`);
  assert.deepEqual(unsafe([...found, ...catalogue, ...proofs]), []);
});
