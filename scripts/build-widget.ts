/**
 * Bundles the embeddable widget (widget/src) into public/widget/widget.<hash>.js plus manifest.json.
 * The file name carries a hash of its content, so the server can cache it forever; the per-user boot
 * script (src/widget/boot-script.ts) points to the current one through the manifest.
 *
 *   npm run build:widget       fails when the bundle is over the size budget; does nothing when
 *                              nothing the bundle was made from changed
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, version as esbuildVersion } from 'esbuild';
import { WIDGET_DIR, type WidgetManifest } from '../src/widget/bundle.js';

export type { WidgetManifest };

export const WIDGET_GZIP_BUDGET = 20 * 1024;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Where the server reads it from (src/widget/bundle.ts). */
export const WIDGET_OUT_DIR = WIDGET_DIR;

/** Atomic, so a server reading the directory never sees half a file. */
async function writeAtomically(file: string, content: string | Uint8Array): Promise<void> {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, content);
  await rename(tmp, file);
}

export async function buildWidget(outDir: string = WIDGET_OUT_DIR): Promise<WidgetManifest> {
  return (await bundle(outDir)).manifest;
}

/** Builds the bundle; also answers the files it was made from (relative to the checkout). */
async function bundle(outDir: string): Promise<{ manifest: WidgetManifest; inputs: string[] }> {
  const result = await build({
    entryPoints: [path.join(root, 'widget', 'src', 'main.tsx')],
    tsconfig: path.join(root, 'widget', 'tsconfig.json'),
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2019',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    charset: 'ascii',
    legalComments: 'none',
    write: false,
    metafile: true,
    absWorkingDir: root,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents;
  if (!code) throw new Error('esbuild produced no output');
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 8);
  const manifest: WidgetManifest = {
    file: `widget.${hash}.js`,
    bytes: code.byteLength,
    gzipBytes: gzipSync(code, { level: 9 }).byteLength,
  };
  await mkdir(outDir, { recursive: true });
  // Older bundles stay: a page that fetched its boot script just before a deploy still loads its one.
  await writeAtomically(path.join(outDir, manifest.file), code);
  await writeAtomically(path.join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // esbuild names its inputs relative to absWorkingDir; the tsconfig is read too.
  const inputs = [...Object.keys(result.metafile.inputs).filter((f) => !f.includes(':')), path.join('widget', 'tsconfig.json')];
  return { manifest, inputs };
}

/** What a bundle was made from: each input file's digest, esbuild's version and this script's. */
interface BuildInputs {
  esbuild: string;
  script: string;
  files: Record<string, string>;
}

const INPUTS_FILE = '.build-inputs.json';
const digest = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The manifest of the current bundle when nothing it was built from has changed since. */
async function currentBundle(outDir: string): Promise<WidgetManifest | undefined> {
  const recorded = await readJson<BuildInputs>(path.join(outDir, INPUTS_FILE));
  const manifest = await readJson<WidgetManifest>(path.join(outDir, 'manifest.json'));
  if (!recorded || !manifest || recorded.esbuild !== esbuildVersion || recorded.script !== digest(await readFile(fileURLToPath(import.meta.url))))
    return undefined;
  try {
    await readFile(path.join(outDir, manifest.file));
    for (const [file, hash] of Object.entries(recorded.files)) if (digest(await readFile(path.join(root, file))) !== hash) return undefined;
  } catch {
    return undefined;
  }
  return manifest;
}

/**
 * `npm run build` (and so `npm start`): the bundle only when its sources changed. The inputs come
 * from esbuild's own list of what it read, so a new import is noticed through the file importing it.
 */
async function buildWidgetIfChanged(outDir: string = WIDGET_OUT_DIR): Promise<{ manifest: WidgetManifest; rebuilt: boolean }> {
  const kept = await currentBundle(outDir);
  if (kept) return { manifest: kept, rebuilt: false };
  const { manifest, inputs } = await bundle(outDir);
  const files: Record<string, string> = {};
  for (const file of inputs) files[file] = digest(await readFile(path.join(root, file)));
  const record: BuildInputs = { esbuild: esbuildVersion, script: digest(await readFile(fileURLToPath(import.meta.url))), files };
  await writeAtomically(path.join(outDir, INPUTS_FILE), `${JSON.stringify(record, null, 2)}\n`);
  return { manifest, rebuilt: true };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { manifest, rebuilt } = await buildWidgetIfChanged();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log(`public/widget/${manifest.file}: ${kb(manifest.bytes)}, ${kb(manifest.gzipBytes)} gzip${rebuilt ? '' : ' (unchanged)'}`);
  if (manifest.gzipBytes > WIDGET_GZIP_BUDGET) {
    console.error(`widget bundle is over its budget of ${kb(WIDGET_GZIP_BUDGET)} gzip`);
    process.exit(1);
  }
}
