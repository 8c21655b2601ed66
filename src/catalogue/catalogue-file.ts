// The catalogue file format (`catalogue/services.json`, and what `idsvc catalogue export --json`
// writes and `import` reads). One reader and one writer, so that the generator, the first-start
// load and the CLI can never drift apart: exporting then importing is always a no-op.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isUrlBuilder, URL_BUILDERS, type UrlBuilder } from './profile-url.js';

export const CATALOGUE_FORMAT = 'idsvc-catalogue/1';
export const CATALOGUE_ATTRIBUTION =
  'Derived from the Sherlock Project site list (https://github.com/sherlock-project/sherlock), MIT licence, see catalogue/LICENSE.sherlock';

/** Order names of `service_details` (SPEC §4.2): a path segment equal to one is never a svcId. */
export const RESERVED_SVC_IDS: readonly string[] = ['popularity', 'alphanumeric', 'combined'];

export interface CatalogueEntry {
  svcId: string;
  svcName: string;
  svcURL: string;
  svcLeftURL: string;
  svcRightURL: string;
  svcMobileURL: string;
  svcIphoneURL: string;
  svcFavicon: string;
  svcIcon: string;
  svcIphoneIcon: string;
  regexCheck: string | null;
  urlBuilder: UrlBuilder | null;
  disabled: boolean;
}

// Fixes the key order of the written file, whatever order the caller's objects have.
const FIELDS = [
  'svcId',
  'svcName',
  'svcURL',
  'svcLeftURL',
  'svcRightURL',
  'svcMobileURL',
  'svcIphoneURL',
  'svcFavicon',
  'svcIcon',
  'svcIphoneIcon',
  'regexCheck',
  'urlBuilder',
  'disabled',
] as const satisfies readonly (keyof CatalogueEntry)[];

const PLAIN_URL_FIELDS = ['svcURL', 'svcMobileURL', 'svcIphoneURL', 'svcFavicon', 'svcIcon', 'svcIphoneIcon'] as const;

const SVC_ID = /^[a-z0-9]{1,64}$/;
const MAX_NAME_LENGTH = 200;
const MAX_URL_LENGTH = 2048;
const MAX_PATTERN_LENGTH = 1000;
// The URL parser silently drops tabs, newlines and outer spaces; a stored value must be exact.
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export const DEFAULT_CATALOGUE_PATH = path.join(findProjectRoot(), 'catalogue', 'services.json');

// Walks up rather than using a fixed `../..`, because this module runs both as `src/catalogue/`
// (tsx) and as `dist/src/catalogue/` (compiled).
function findProjectRoot(): string {
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return process.cwd();
  }
}

export function loadCatalogueFile(file: string = DEFAULT_CATALOGUE_PATH): CatalogueEntry[] {
  const text = readFileSync(file, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`catalogue file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  try {
    return parseCatalogueFile(json);
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
}

export function parseCatalogueFile(json: unknown): CatalogueEntry[] {
  if (!isPlainObject(json)) throw new Error('catalogue file: must be a JSON object');
  for (const key of Object.keys(json)) {
    if (key !== 'format' && key !== 'attribution' && key !== 'services') {
      throw new Error(`catalogue file: unknown top-level field "${key}"`);
    }
  }
  if (json.format !== CATALOGUE_FORMAT) {
    throw new Error(`catalogue file: "format" must be "${CATALOGUE_FORMAT}"`);
  }
  if (json.attribution !== undefined && typeof json.attribution !== 'string') {
    throw new Error('catalogue file: "attribution" must be a string');
  }
  if (!Array.isArray(json.services)) throw new Error('catalogue file: "services" must be an array');

  const seen = new Set<string>();
  return json.services.map((raw: unknown, index: number) => {
    const entry = parseEntry(raw, index);
    if (seen.has(entry.svcId)) {
      throw new Error(`services[${index}] (svcId "${entry.svcId}"): svcId is a duplicate`);
    }
    seen.add(entry.svcId);
    return entry;
  });
}

function parseEntry(raw: unknown, index: number): CatalogueEntry {
  let where = `services[${index}]`;
  // Annotated so that TypeScript narrows after each `fail(...)`.
  const fail: (field: string, problem: string) => never = (field, problem) => {
    throw new Error(`${where}: ${field} ${problem}`);
  };
  if (!isPlainObject(raw)) return fail('entry', 'must be an object');
  const { svcId } = raw;
  // Only a well-formed svcId is echoed: the message may end up in a terminal or a log.
  if (typeof svcId === 'string' && SVC_ID.test(svcId)) where += ` (svcId "${svcId}")`;
  for (const key of Object.keys(raw)) {
    if (!(FIELDS as readonly string[]).includes(key)) fail(JSON.stringify(key.slice(0, 64)), 'is not a known field');
  }
  for (const field of FIELDS) {
    if (!Object.hasOwn(raw, field)) fail(field, 'is missing');
  }

  if (typeof svcId !== 'string' || !SVC_ID.test(svcId)) {
    return fail('svcId', 'must be 1 to 64 characters a-z and 0-9');
  }
  if (RESERVED_SVC_IDS.includes(svcId)) fail('svcId', `"${svcId}" is reserved (an order name)`);

  const { svcName } = raw;
  if (typeof svcName !== 'string' || svcName.trim() === '' || svcName.length > MAX_NAME_LENGTH || CONTROL.test(svcName)) {
    fail('svcName', `must be a non-empty string of at most ${MAX_NAME_LENGTH} characters without control characters`);
  }

  for (const field of PLAIN_URL_FIELDS) {
    const value = raw[field];
    if (typeof value !== 'string' || (value !== '' && !isHttpUrl(value))) {
      fail(field, 'must be "" or an http(s) URL');
    }
  }

  const { svcLeftURL, svcRightURL } = raw;
  if (typeof svcLeftURL !== 'string' || !isTemplatePart(svcLeftURL) || (svcLeftURL !== '' && !/^https?:\/\//i.test(svcLeftURL))) {
    fail('svcLeftURL', 'must be "" or the start of an http(s) URL');
  }
  if (typeof svcRightURL !== 'string' || !isTemplatePart(svcRightURL)) {
    fail('svcRightURL', `must be a string of at most ${MAX_URL_LENGTH} characters without spaces`);
  }
  if (svcLeftURL === '' && svcRightURL !== '') fail('svcRightURL', 'must be "" when svcLeftURL is ""');
  if (svcLeftURL !== '' && !isHttpUrl(`${svcLeftURL}x${svcRightURL}`)) {
    fail('svcLeftURL', 'with an identifier and svcRightURL must form an http(s) URL');
  }

  const { regexCheck } = raw;
  if (regexCheck !== null) {
    if (typeof regexCheck !== 'string' || regexCheck.length > MAX_PATTERN_LENGTH) {
      fail('regexCheck', `must be null or a string of at most ${MAX_PATTERN_LENGTH} characters`);
    }
    try {
      new RegExp(regexCheck);
    } catch (err) {
      fail('regexCheck', `is not a valid JavaScript regular expression (${(err as Error).message})`);
    }
  }

  const { urlBuilder } = raw;
  if (urlBuilder !== null && !isUrlBuilder(urlBuilder)) {
    fail('urlBuilder', `must be null or one of ${URL_BUILDERS.map((b) => `"${b}"`).join(', ')}`);
  }

  if (typeof raw.disabled !== 'boolean') fail('disabled', 'must be true or false');

  return canonical(raw as unknown as CatalogueEntry);
}

export function serialiseCatalogue(entries: readonly CatalogueEntry[]): string {
  const services = entries.map(canonical).sort((a, b) => (a.svcId < b.svcId ? -1 : a.svcId > b.svcId ? 1 : 0));
  const file = { format: CATALOGUE_FORMAT, attribution: CATALOGUE_ATTRIBUTION, services };
  return `${JSON.stringify(file, null, 2)}\n`;
}

// Copies only the known fields, in file order: rows from storage may carry extra columns.
function canonical(entry: CatalogueEntry): CatalogueEntry {
  const out: Record<string, unknown> = {};
  for (const field of FIELDS) out[field] = entry[field];
  return out as unknown as CatalogueEntry;
}

function isHttpUrl(value: string): boolean {
  if (value.length > MAX_URL_LENGTH || WHITESPACE_OR_CONTROL.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

function isTemplatePart(value: string): boolean {
  return value.length <= MAX_URL_LENGTH && !WHITESPACE_OR_CONTROL.test(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
