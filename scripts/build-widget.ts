/**
 * Bundles the embeddable widget (widget/src) into public/widget/widget.<hash>.js plus manifest.json.
 * The file name carries a hash of its content, so the server can cache it forever; the per-user boot
 * script (src/widget/boot-script.ts) points to the current one through the manifest.
 *
 *   npm run build:widget       fails when the bundle is over the size budget
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
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
  return manifest;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const manifest = await buildWidget();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log(`public/widget/${manifest.file}: ${kb(manifest.bytes)}, ${kb(manifest.gzipBytes)} gzip`);
  if (manifest.gzipBytes > WIDGET_GZIP_BUDGET) {
    console.error(`widget bundle is over its budget of ${kb(WIDGET_GZIP_BUDGET)} gzip`);
    process.exit(1);
  }
}
