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
// Sherlock's data is corrected where it is wrong (SHERLOCK_FIXES), and services an operator would
// not show to partners ship disabled (DISABLED_BY_DEFAULT); both lists say why for each entry.
// Sherlock patterns are Python `re` syntax; the one construct JavaScript reads differently,
// `{,n}` (JavaScript takes it literally), is rewritten to `{0,n}`.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type CatalogueEntry, parseCatalogueFile, RESERVED_SVC_IDS, serialiseCatalogue } from '../src/catalogue/catalogue-file.js';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// A copy of Sherlock's list is kept in the project so a fresh clone can regenerate the catalogue.
export const DEFAULT_SHERLOCK_DATA = path.resolve(PROJECT_ROOT, 'catalogue/source/sherlock-data.json');
export const DEFAULT_OUT_DIR = path.join(PROJECT_ROOT, 'catalogue');

/**
 * Hand-written entries. Icons default to the svcURL origin's `/favicon.ico` and
 * `/apple-touch-icon.png`, like the derived entries; give them here to override.
 */
type CuratedEntry = Pick<CatalogueEntry, 'svcId' | 'svcName' | 'svcURL' | 'svcLeftURL' | 'svcRightURL' | 'regexCheck' | 'urlBuilder'> &
  Partial<Pick<CatalogueEntry, 'svcMobileURL' | 'svcIphoneURL' | 'svcFavicon' | 'svcIcon' | 'svcIphoneIcon'>>;

export const CURATED: readonly CuratedEntry[] = [
  // A person's own site or blog: any https URL (`https://alice.github.io/blog/`) or a bare
  // `example.com/path`, built by the `website` URL builder (src/catalogue/profile-url.ts), so an
  // identity that holds a bare domain (`alice.example`) still gives https://alice.example/. rel="me"
  // on the page itself proves it, and the DNS method too when the address is a domain's root
  // (src/verification/dns-checker.ts). No icon: it would be one site's, not every website's.
  {
    svcId: 'website',
    svcName: 'Website',
    svcURL: '',
    svcLeftURL: '',
    svcRightURL: '',
    regexCheck: null,
    urlBuilder: 'website',
    svcFavicon: '',
    svcIcon: '',
    svcIphoneIcon: '',
  },
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

/** Curated entries that ship enabled: a personal website and Mastodon on any instance are what most people have. */
export const CURATED_ENABLED: ReadonlySet<string> = new Set(['website', 'mastodon']);

/** Fields of Sherlock-derived entries that Sherlock's data gets wrong, by svcId, with why. */
export const SHERLOCK_FIXES: Readonly<Record<string, { svcURL: string; why: string }>> = {
  mastodonsocial: { svcURL: 'https://mastodon.social/', why: "Sherlock's urlMain for mastodon.social is chaos.social's" },
  curseforge: { svcURL: 'https://www.curseforge.com/', why: 'urlMain ends the host name with a dot' },
  rubyforums: { svcURL: 'https://ruby-forum.com/', why: 'urlMain misspells the host (ruby-forums.com); the forum and its profiles are on ruby-forum.com' },
};

/**
 * Services that ship disabled (an operator may still enable one with `idsvc catalogue disable ID
 * --enable`), with why: piracy, adult content, trading in stolen or hacked accounts, and templates
 * that give an API answer rather than a page a person can open.
 */
export const DISABLED_BY_DEFAULT: Readonly<Record<string, string>> = {
  '1337x': 'a torrent index of pirated films, music and software',
  nyaasi: 'a torrent index, mostly of unlicensed anime',
  aniworld: 'streams anime without a licence',
  royalcams: 'an adult webcam site',
  crackedforum: 'a forum trading cracked accounts and hacking tools',
  breachstarsforum: 'a forum trading leaked databases',
  hudsonrock: 'a look-up of credentials stolen by infostealer malware, not a person’s page',
  swapd: 'a marketplace for buying and selling social media accounts',
  fameswap: 'a marketplace for buying and selling social media accounts',
  discordbio: 'the template is a JSON API address (discords.com/api-v2/…), not a page a person can open',
  minecraft: 'the template is a JSON API address (api.mojang.com), not a page a person can open',
};

/**
 * Enabled services whose profile pages are on another domain than the service's main address, with
 * why; every other enabled service's template must stay on its own domain (a test checks it).
 */
export const OTHER_DOMAIN_PROFILES: Readonly<Record<string, string>> = {
  blogger: "Blogger's blogs are at {name}.blogspot.com",
  buymeacoffee: 'profiles use its short domain buymeacoff.ee',
  empretiendaar: 'shops are at {name}.empretienda.com.ar, the Argentine domain of empretienda.com',
  gitbook: 'spaces are published at {name}.gitbook.io',
  tiendanube: 'shops are at {name}.mitiendanube.com',
};

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
    ([name, site]) => name !== '$schema' && site.isNSFW !== true && typeof site.url === 'string' && site.url.includes('{}'),
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
    const svcId = ids[i]!;
    const svcURL = SHERLOCK_FIXES[svcId]?.svcURL ?? site.urlMain;
    return {
      svcId,
      svcName: name,
      svcURL,
      svcLeftURL: template.slice(0, at),
      svcRightURL: template.slice(at + 2),
      svcMobileURL: '',
      svcIphoneURL: '',
      ...iconsFor(name, svcURL),
      regexCheck: typeof site.regexCheck === 'string' ? pythonPatternToJs(site.regexCheck) : null,
      urlBuilder: null,
      disabled: Object.hasOwn(DISABLED_BY_DEFAULT, svcId),
    };
  });
}

export function curatedEntries(): CatalogueEntry[] {
  return CURATED.map((c) => {
    const icons = c.svcURL === '' ? { svcFavicon: '', svcIcon: '', svcIphoneIcon: '' } : iconsFor(c.svcName, c.svcURL);
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
      // The others ship disabled; an operator turns one on with `idsvc catalogue disable orcid --enable`.
      disabled: !CURATED_ENABLED.has(c.svcId),
    };
  });
}

/** The whole file's text. Re-parsed before returning, so a bad entry fails here, not at start-up. */
export function generateCatalogue(sherlockData: unknown): string {
  const entries = [...sherlockEntries(sherlockData), ...curatedEntries()];
  // A list naming a service the data no longer has would silently stop applying.
  const ids = new Set(entries.map((e) => e.svcId));
  for (const [list, names] of [
    ['SHERLOCK_FIXES', SHERLOCK_FIXES],
    ['DISABLED_BY_DEFAULT', DISABLED_BY_DEFAULT],
    ['OTHER_DOMAIN_PROFILES', OTHER_DOMAIN_PROFILES],
  ] as const) {
    for (const id of Object.keys(names)) if (!ids.has(id)) throw new Error(`${list}: no service "${id}" in the data`);
  }
  const text = serialiseCatalogue(entries);
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
  console.log(`wrote ${path.join(outDir, 'services.json')}: ${count} services (${count - CURATED.length} from Sherlock, ${CURATED.length} curated)`);
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
