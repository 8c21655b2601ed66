// The layers stay apart. Above the repositories (api/, site/, services/, gravatar/) code reads
// through `ctx.db` and writes through `ctx.db.write`: it names no query builder, no connection and
// no transaction, and it imports nothing of src/db/ but the handle's types (db/handle.ts). And no
// file of src/ reaches itself through its imports, type-only imports and migrations included.
// Each check is also run on a small made-up tree, so that a check that finds nothing is seen to
// be able to find something.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { projectRoot } from '../../src/paths.js';

const UPPER = ['src/api/', 'src/site/', 'src/services/', 'src/gravatar/'];
/** The handle's types (Db, Handle, Write): the one module of src/db/ the upper layers may import ... */
const HANDLE = 'src/db/handle.ts';
/** ... besides which driver errors mean "the database is unavailable", which names no connection. */
const FAULTS = 'src/db/faults.ts';
/** Names that mean choosing a connection, running a transaction by hand or branching on the dialect. */
const FORBIDDEN_NAMES = new Set(['kysely', 'Kysely', 'onReader', 'inTx', 'transaction', 'startTransaction', 'writes', 'pgPool', 'dialect']);

type Tree = Map<string, string>;

function readSrc(): Tree {
  const tree: Tree = new Map();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(projectRoot, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (/\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) tree.set(rel, fs.readFileSync(path.join(projectRoot, rel), 'utf8'));
    }
  };
  walk('src');
  return tree;
}

interface Parsed {
  imports: { specifier: string; target: string | null }[];
  /** Identifiers and property names used in code (not in comments or strings). */
  names: Set<string>;
}

/** `./x.js` from `src/a/b.ts` → `src/a/x.ts` (or .tsx, or an index); null for a package. */
function resolve(tree: Tree, from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier)).replace(/\.js$/, '');
  for (const candidate of [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`]) if (tree.has(candidate)) return candidate;
  return `${base} (not found)`;
}

function parse(tree: Tree, file: string): Parsed {
  const source = ts.createSourceFile(file, tree.get(file)!, ts.ScriptTarget.Latest, false, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const imports: Parsed['imports'] = [];
  const names = new Set<string>();
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      imports.push({ specifier: node.moduleSpecifier.text, target: resolve(tree, file, node.moduleSpecifier.text) });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg && ts.isStringLiteralLike(arg)) imports.push({ specifier: arg.text, target: resolve(tree, file, arg.text) });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      imports.push({ specifier: node.argument.literal.text, target: resolve(tree, file, node.argument.literal.text) });
    }
    if (ts.isIdentifier(node)) names.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { imports, names };
}

/** What the upper layers must not do, one line per finding. */
function layerFindings(tree: Tree): string[] {
  const findings: string[] = [];
  for (const file of tree.keys()) {
    if (!UPPER.some((dir) => file.startsWith(dir))) continue;
    const { imports, names } = parse(tree, file);
    for (const i of imports) {
      if (i.specifier === 'kysely' || i.specifier.startsWith('kysely/')) findings.push(`${file} imports kysely`);
      if (i.target?.startsWith('src/db/') && i.target !== HANDLE && i.target !== FAULTS) findings.push(`${file} imports ${i.target}`);
    }
    for (const name of names) if (FORBIDDEN_NAMES.has(name)) findings.push(`${file} names ${name}`);
  }
  return findings.sort();
}

/** Every import circle, each as the files in order from its first one back to it. */
function circles(tree: Tree): string[][] {
  const edges = new Map<string, string[]>();
  for (const file of tree.keys()) {
    edges.set(
      file,
      parse(tree, file)
        .imports.map((i) => i.target)
        .filter((t): t is string => t !== null && tree.has(t)),
    );
  }
  // Tarjan's strongly connected components, iteratively: every component of more than one file,
  // or a file importing itself, is a circle.
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  for (const root of edges.keys()) {
    if (order.has(root)) continue;
    const work: { file: string; next: number }[] = [{ file: root, next: 0 }];
    order.set(root, index);
    low.set(root, index++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const targets = edges.get(top.file)!;
      if (top.next < targets.length) {
        const t = targets[top.next++]!;
        if (!order.has(t)) {
          order.set(t, index);
          low.set(t, index++);
          stack.push(t);
          onStack.add(t);
          work.push({ file: t, next: 0 });
        } else if (onStack.has(t)) {
          low.set(top.file, Math.min(low.get(top.file)!, order.get(t)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(top.file)!));
      if (low.get(top.file) !== order.get(top.file)) continue;
      const component: string[] = [];
      let f: string;
      do {
        f = stack.pop()!;
        onStack.delete(f);
        component.push(f);
      } while (f !== top.file);
      if (component.length > 1 || targets.includes(top.file)) found.push(component.sort());
    }
  }
  return found;
}

test('above the repositories, code names no query builder, connection or transaction, and imports only the handle of src/db/', () => {
  const tree = readSrc();
  assert.ok([...tree.keys()].filter((f) => f.startsWith('src/services/')).length > 20, 'the services were read');
  assert.deepEqual(layerFindings(tree), []);
});

test('the layer check finds each kind of breach in a made-up tree', () => {
  const tree: Tree = new Map([
    [HANDLE, 'export interface Db {}'],
    ['src/db/prepared.ts', 'export const onReader = 1;'],
    ['src/site/a.ts', "import { sql } from 'kysely';\nimport type { Db } from '../db/handle.js';\n// ctx.db.kysely in a comment is no use of it\n"],
    ['src/api/b.ts', "import { onReader } from '../db/prepared.js';\nexport const x = onReader;"],
    ['src/services/c.ts', 'export const run = (ctx: any) => ctx.db.kysely.transaction().execute(async () => {});'],
    ['src/gravatar/d.ts', 'export const run = (ctx: any) => ctx.writes.run(async () => {});'],
    ['src/jobs/e.ts', "import { onReader } from '../db/prepared.js';"],
  ]);
  assert.deepEqual(layerFindings(tree), [
    'src/api/b.ts imports src/db/prepared.ts',
    'src/api/b.ts names onReader',
    'src/gravatar/d.ts names writes',
    'src/services/c.ts names kysely',
    'src/services/c.ts names transaction',
    'src/site/a.ts imports kysely',
  ]);
});

test('no file of src/ reaches itself through its imports (type-only imports and migrations included)', () => {
  const tree = readSrc();
  assert.ok(tree.has('src/db/migrations/index.ts') && tree.has('src/db/database.ts'), 'the migrations and the database were read');
  assert.deepEqual(
    circles(tree).map((c) => c.join(' -> ')),
    [],
  );
});

test('the circle check finds a circle through a type-only import, a re-export and a dynamic import', () => {
  const tree: Tree = new Map([
    ['src/db/database.ts', "import { all } from './migrations/index.js';\nexport type DialectName = 'sqlite';"],
    ['src/db/migrations/index.ts', "export { first as all } from './001.js';"],
    ['src/db/migrations/001.ts', "import type { DialectName } from '../database.js';\nexport const first = 1;"],
    ['src/a.ts', "export const load = () => import('./b.js');"],
    ['src/b.ts', "import './a.js';"],
    ['src/c.ts', "import './d.js';"],
    ['src/d.ts', 'export {};'],
  ]);
  assert.deepEqual(
    circles(tree).sort(),
    [
      ['src/a.ts', 'src/b.ts'],
      ['src/db/database.ts', 'src/db/migrations/001.ts', 'src/db/migrations/index.ts'],
    ].sort(),
  );
});
