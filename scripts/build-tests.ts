// Compiles the test files, and the code they import, to plain JavaScript once per `npm test`
// (scripts/test.sh), so that each test file's process loads JavaScript instead of registering tsx,
// whose loader would transform and resolve every module again in each of the suite's processes.
//
//   tsx scripts/build-tests.ts OUT_DIR
//
// OUT_DIR (inside the checkout, so that packages resolve from its node_modules and the project root
// is found above it) mirrors the checkout: each TypeScript file of src/, test/, bench/, examples/ and
// scripts/ is compiled beside a link to its source, every other file of those folders is linked, and
// every other entry at the top (catalogue/, public/, widget/, ...) is a link too. A path a module
// computes from its own location (`import.meta.dirname`, `..`) therefore finds what it would have
// found in the checkout. package.json is left out: the project root stays the checkout's.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { projectRoot } from '../src/paths.js';

const COMPILED = ['src', 'test', 'bench', 'examples', 'scripts'];
/** Not mirrored: the root's package.json would make OUT_DIR the project root; the rest is built output, history or a data set. */
const LEFT_OUT = new Set(['package.json', 'package-lock.json', 'node_modules', 'dist', '.git', 'bench/data']);

const out = process.argv[2];
if (!out) throw new Error('usage: tsx scripts/build-tests.ts OUT_DIR');
const outDir = path.resolve(out);
if (!outDir.startsWith(projectRoot + path.sep)) throw new Error(`OUT_DIR must be inside ${projectRoot}`);
fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });

const isSource = (name: string) => /\.tsx?$/.test(name) && !name.endsWith('.d.ts');
const sources: string[] = [];

function mirror(rel: string): void {
  for (const entry of fs.readdirSync(path.join(projectRoot, rel), { withFileTypes: true })) {
    const child = path.join(rel, entry.name);
    if (LEFT_OUT.has(child)) continue;
    if (entry.isDirectory()) {
      fs.mkdirSync(path.join(outDir, child), { recursive: true });
      mirror(child);
      continue;
    }
    if (isSource(entry.name)) sources.push(child);
    fs.symlinkSync(path.join(projectRoot, child), path.join(outDir, child));
  }
}

for (const entry of fs.readdirSync(projectRoot, { withFileTypes: true })) {
  const name = entry.name;
  if (LEFT_OUT.has(name) || path.join(projectRoot, name) === outDir || outDir.startsWith(path.join(projectRoot, name) + path.sep)) continue;
  if (COMPILED.includes(name)) {
    fs.mkdirSync(path.join(outDir, name));
    mirror(name);
  } else {
    fs.symlinkSync(path.join(projectRoot, name), path.join(outDir, name));
  }
}

for (const file of sources) {
  const js = path.join(outDir, file.replace(/\.tsx?$/, '.js'));
  if (fs.existsSync(js)) throw new Error(`${file} would be compiled over ${path.relative(outDir, js)}`);
}

// esbuild reads tsconfig.json for the JSX settings; the type checking is `npm run typecheck`'s.
const compiled = await build({
  absWorkingDir: projectRoot,
  entryPoints: sources,
  outdir: outDir,
  outbase: '.',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});

/**
 * Packages published as hundreds of small ES modules, which each test process would resolve, read
 * and link one by one: bundled for this run, one file for each entry the compiled code imports,
 * into OUT_DIR/node_modules, where a compiled file finds them before the checkout's node_modules.
 * Entries share their modules through common chunks, so a package keeps one instance of its state.
 * A package the code loads that depends on one of them would find the checkout's copy, a second
 * instance: the build refuses that. The server as operators run it (dist/) imports the packages as
 * published.
 */
const PREBUNDLED = ['kysely', '@sinclair/typebox'];
const entries = new Map<string, Set<string>>(PREBUNDLED.map((name) => [name, new Set<string>()]));
/** The other packages the compiled code loads (type-only imports are gone from it). */
const loaded = new Set<string>();
for (const output of Object.values(compiled.metafile.outputs)) {
  for (const { path: imported, external } of output.imports) {
    if (!external || imported.startsWith('node:') || imported.startsWith('.')) continue;
    const name = PREBUNDLED.find((p) => imported === p || imported.startsWith(`${p}/`));
    if (name) entries.get(name)?.add(`.${imported.slice(name.length)}`);
    else loaded.add(packageNameOf(imported));
  }
}
const dependents = [...dependingOn(loaded, new Set(PREBUNDLED))];
if (dependents.length > 0) {
  throw new Error(`${dependents.join(', ')} would load a second copy of a package bundled for the run (${PREBUNDLED.join(', ')}): take it out of PREBUNDLED`);
}

function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** The packages among `roots` and their dependencies (as installed at the top of node_modules) that depend on one of `targets`. */
function* dependingOn(roots: Set<string>, targets: Set<string>): Generator<string> {
  const seen = new Set<string>();
  const queue = [...roots];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name) || targets.has(name)) continue;
    seen.add(name);
    const file = path.join(projectRoot, 'node_modules', name, 'package.json');
    if (!fs.existsSync(file)) continue; // a builtin without its node: prefix, or the project's own
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<'dependencies' | 'peerDependencies', Record<string, string> | undefined>;
    const needs = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies });
    if (needs.some((n) => targets.has(n))) yield name;
    queue.push(...needs);
  }
}

const outOf = (name: string, subpath: string) => `${name}/${subpath === '.' ? 'index' : subpath.slice(2)}`;
const modules = path.join(outDir, 'node_modules');
await build({
  absWorkingDir: projectRoot,
  entryPoints: [...entries].flatMap(([name, subpaths]) => [...subpaths].map((sub) => ({ in: `${name}${sub.slice(1)}`, out: outOf(name, sub) }))),
  outdir: modules,
  bundle: true,
  splitting: true,
  chunkNames: '.chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
});
for (const [name, subpaths] of entries) {
  if (subpaths.size === 0) continue;
  const { version } = JSON.parse(fs.readFileSync(path.join(projectRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
  const exports = Object.fromEntries([...subpaths].map((sub) => [sub, `./${outOf(name, sub).slice(name.length + 1)}.mjs`]));
  fs.writeFileSync(path.join(modules, name, 'package.json'), `${JSON.stringify({ name, version, type: 'module', exports }, null, 2)}\n`);
}
