// Generates catalogue/services.json (and catalogue/LICENSE.sherlock) from the Sherlock Project
// site list, as SPEC §11 describes. Run with `npm run catalogue:generate`; the output is
// deterministic and a test fails when the committed file differs from a fresh run.
//
//   tsx scripts/generate-catalogue.ts [path/to/sherlock/data.json] [--out-dir DIR]
//
// The file holds two kinds of entries, both sorted together by svcId:
// - derived from Sherlock: every site that is not NSFW and has `{}` in its `url` (459 in the
//   pinned copy);
// - CURATED below: services that Sherlock lacks or cannot describe with a fixed template.
// Sherlock patterns are Python `re` syntax; the one construct JavaScript reads differently,
// `{,n}` (JavaScript takes it literally), is rewritten to `{0,n}`.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  type CatalogueEntry,
  parseCatalogueFile,
  RESERVED_SVC_IDS,
  serialiseCatalogue,
} from '../src/catalogue/catalogue-file.js';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// A copy of Sherlock's list is kept in the project so a fresh clone can regenerate the catalogue.
export const DEFAULT_SHERLOCK_DATA = path.resolve(PROJECT_ROOT, 'catalogue/source/sherlock-data.json');
export const DEFAULT_OUT_DIR = path.join(PROJECT_ROOT, 'catalogue');

/**
 * Hand-written entries. Icons default to the svcURL origin's `/favicon.ico` and
 * `/apple-touch-icon.png`, like the derived entries; give them here to override.
 */
type CuratedEntry = Pick<
  CatalogueEntry,
  'svcId' | 'svcName' | 'svcURL' | 'svcLeftURL' | 'svcRightURL' | 'regexCheck' | 'urlBuilder'
> &
  Partial<Pick<CatalogueEntry, 'svcMobileURL' | 'svcIphoneURL' | 'svcFavicon' | 'svcIcon' | 'svcIphoneIcon'>>;

export const CURATED: readonly CuratedEntry[] = [
  {
    svcId: 'mastodon',
    svcName: 'Mastodon',
    svcURL: 'https://joinmastodon.org/',
    svcLeftURL: '',
    svcRightURL: '',
    regexCheck: '^@?[A-Za-z0-9_]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$',
    urlBuilder: 'mastodon',
  },
  // Not in Sherlock's list, and proven by a proof text (catalogue/proofs.json): the identifier is
  // the number in the profile's address.
  {
    svcId: 'stackoverflow',
    svcName: 'Stack Overflow',
    svcURL: 'https://stackoverflow.com/',
    svcLeftURL: 'https://stackoverflow.com/users/',
    svcRightURL: '',
    regexCheck: '^[0-9]{1,12}$',
    urlBuilder: null,
  },
  {
    svcId: 'orcid',
    svcName: 'ORCID',
    svcURL: 'https://orcid.org/',
    svcLeftURL: 'https://orcid.org/',
    svcRightURL: '',
    regexCheck: '^[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]$',
    urlBuilder: null,
  },
];

interface SherlockSite {
  url?: unknown;
  urlMain?: unknown;
  regexCheck?: unknown;
  isNSFW?: unknown;
}

/** The base svcId of a name: lower-cased, everything but a-z and 0-9 removed. */
export function baseSvcId(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/**
 * svcIds for names, in input order. A base id already taken (by an earlier name, by `taken`, or
 * as a reserved order name) gets the first free suffix 2, 3, …
 */
export function makeSvcIds(names: readonly string[], taken: Iterable<string> = []): string[] {
  const used = new Set<string>([...RESERVED_SVC_IDS, ...taken]);
  return names.map((name) => {
    const base = baseSvcId(name);
    if (base === '') throw new Error(`site "${name}": name has no a-z or 0-9 to make a svcId from`);
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}${n}`;
    used.add(id);
    return id;
  });
}

export function pythonPatternToJs(pattern: string): string {
  return pattern.replace(/(?<!\\)\{,(\d+)\}/g, '{0,$1}');
}

function originOf(siteName: string, url: string): string {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    throw new Error(`site "${siteName}": "${url}" is not a URL`);
  }
  if (!/^https?:\/\//.test(origin)) throw new Error(`site "${siteName}": "${url}" is not http(s)`);
  return origin;
}

function iconsFor(siteName: string, mainUrl: string) {
  const origin = originOf(siteName, mainUrl);
  const touchIcon = `${origin}/apple-touch-icon.png`;
  return { svcFavicon: `${origin}/favicon.ico`, svcIcon: touchIcon, svcIphoneIcon: touchIcon };
}

/** The sites that make it into the catalogue, as [name, site] in input order. */
export function selectSherlockSites(data: unknown): [string, SherlockSite][] {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new Error('Sherlock data: expected a JSON object keyed by site name');
  }
  return Object.entries(data as Record<string, SherlockSite>).filter(
    ([name, site]) =>
      name !== '$schema' && site.isNSFW !== true && typeof site.url === 'string' && site.url.includes('{}'),
  );
}

export function sherlockEntries(data: unknown): CatalogueEntry[] {
  const sites = selectSherlockSites(data);
  const ids = makeSvcIds(
    sites.map(([name]) => name),
    CURATED.map((c) => c.svcId),
  );
  return sites.map(([name, site], i): CatalogueEntry => {
    const template = site.url as string;
    const at = template.indexOf('{}');
    if (typeof site.urlMain !== 'string') throw new Error(`site "${name}": urlMain is missing`);
    return {
      svcId: ids[i]!,
      svcName: name,
      svcURL: site.urlMain,
      svcLeftURL: template.slice(0, at),
      svcRightURL: template.slice(at + 2),
      svcMobileURL: '',
      svcIphoneURL: '',
      ...iconsFor(name, site.urlMain),
      regexCheck: typeof site.regexCheck === 'string' ? pythonPatternToJs(site.regexCheck) : null,
      urlBuilder: null,
      disabled: false,
    };
  });
}

export function curatedEntries(): CatalogueEntry[] {
  return CURATED.map((c) => {
    const icons = iconsFor(c.svcName, c.svcURL);
    return {
      svcId: c.svcId,
      svcName: c.svcName,
      svcURL: c.svcURL,
      svcLeftURL: c.svcLeftURL,
      svcRightURL: c.svcRightURL,
      svcMobileURL: c.svcMobileURL ?? '',
      svcIphoneURL: c.svcIphoneURL ?? '',
      svcFavicon: c.svcFavicon ?? icons.svcFavicon,
      svcIcon: c.svcIcon ?? icons.svcIcon,
      svcIphoneIcon: c.svcIphoneIcon ?? icons.svcIphoneIcon,
      regexCheck: c.regexCheck,
      urlBuilder: c.urlBuilder,
      // Shipped disabled: the catalogue the contract promises is exactly the 459 Sherlock-derived
      // services (SPEC §11); an operator turns a curated one on with
      // `idsvc catalogue disable mastodon --enable`.
      disabled: true,
    };
  });
}

/** The whole file's text. Re-parsed before returning, so a bad entry fails here, not at start-up. */
export function generateCatalogue(sherlockData: unknown): string {
  const text = serialiseCatalogue([...sherlockEntries(sherlockData), ...curatedEntries()]);
  parseCatalogueFile(JSON.parse(text));
  return text;
}

function parseArgs(argv: readonly string[]): { input: string; outDir: string } {
  let input = DEFAULT_SHERLOCK_DATA;
  let outDir = DEFAULT_OUT_DIR;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--out-dir') {
      const value = argv[++i];
      if (value === undefined) throw new Error('--out-dir needs a directory');
      outDir = path.resolve(value);
    } else if (arg.startsWith('-')) {
      throw new Error(`unknown option ${arg}`);
    } else {
      input = path.resolve(arg);
    }
  }
  return { input, outDir };
}

function main(): void {
  const { input, outDir } = parseArgs(process.argv.slice(2));
  const text = generateCatalogue(JSON.parse(readFileSync(input, 'utf8')));
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'services.json'), text);
  // Not copyFileSync: it would copy the source's read-only mode and make the next run fail.
  writeFileSync(path.join(outDir, 'LICENSE.sherlock'), readFileSync(path.join(path.dirname(input), 'LICENSE')));
  const count = (JSON.parse(text) as { services: unknown[] }).services.length;
  console.log(
    `wrote ${path.join(outDir, 'services.json')}: ${count} services (${count - CURATED.length} from Sherlock, ${CURATED.length} curated)`,
  );
}

// Imported by the tests for its functions; only a direct run writes files.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    main();
  } catch (err) {
    console.error(`generate-catalogue: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}
