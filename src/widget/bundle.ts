// The widget's code: a static, content-hashed file under public/widget/, written by
// `npm run build` (scripts/build-widget.ts) with a manifest naming the current one. Per-user boot
// scripts point at the current file; older files stay servable, so a page that got its boot script
// just before a deploy still loads its bundle.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../paths.js';
import { cachedBody, type CachedBody } from './cached-body.js';

export interface WidgetManifest {
  file: string;
  bytes: number;
  gzipBytes: number;
}

export const WIDGET_DIR = path.join(projectRoot, 'public', 'widget');
export const BUNDLE_FILE = /^widget\.[0-9a-f]{8}\.js$/;

async function readManifest(dir: string): Promise<WidgetManifest | null> {
  try {
    const parsed = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as Partial<WidgetManifest>;
    if (typeof parsed.file !== 'string' || !BUNDLE_FILE.test(parsed.file)) throw new Error(`bad manifest in ${dir}`);
    return parsed as WidgetManifest;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** In a checkout run by tsx (npm run dev, tests) a missing bundle is built on first use. */
async function buildInCheckout(dir: string): Promise<WidgetManifest> {
  const script = pathToFileURL(path.join(projectRoot, 'scripts', 'build-widget.ts')).href;
  let mod: { buildWidget(dir?: string): Promise<WidgetManifest> };
  try {
    mod = (await import(script)) as typeof mod;
  } catch {
    throw new Error('The widget bundle is not built (public/widget/manifest.json is missing): run `npm run build`.');
  }
  return mod.buildWidget(dir);
}

export class WidgetBundle {
  private manifest: Promise<WidgetManifest> | undefined;
  /** The manifest once read: every boot script names its file, and then gets it at once. */
  private loaded: WidgetManifest | undefined;
  private readonly files = new Map<string, CachedBody>();

  constructor(private readonly dir: string = WIDGET_DIR) {}

  /** The current bundle, read once per process (a deploy restarts the process). */
  current(): WidgetManifest | Promise<WidgetManifest> {
    if (this.loaded) return this.loaded;
    this.manifest ??= readManifest(this.dir)
      .then((m) => m ?? buildInCheckout(this.dir))
      .then((m) => {
        this.loaded = m;
        return m;
      })
      .catch((err: unknown) => {
        this.manifest = undefined; // a later request tries again
        throw err;
      });
    return this.manifest;
  }

  /** A bundle file by name, or null; names are checked against the hashed pattern, never joined raw. */
  async file(name: string): Promise<CachedBody | null> {
    if (!BUNDLE_FILE.test(name)) return null;
    const cached = this.files.get(name);
    if (cached) return cached;
    let body: Buffer;
    try {
      body = await readFile(path.join(this.dir, name));
    } catch {
      return null;
    }
    const file = cachedBody(body);
    if (this.files.size >= 16) this.files.clear();
    this.files.set(name, file);
    return file;
  }
}

/** One per process: every app instance serves the same public/widget directory. */
export const widgetBundle = new WidgetBundle();
