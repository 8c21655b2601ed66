// Proof providers as data (catalogue/proofs.json): for each service, where a person's proof text is
// read from and how, so that an operator adds a service without code. The file is validated by a
// TypeBox schema and by checks the schema cannot say (patterns compile, templates name only
// variables the definition has), once, at start-up: a bad file stops the server with one line
// naming the entry. Reading an answer is pure (`readAnswer`), so each definition's own examples
// run without a network, by the suite and by anyone editing the file.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parseDocument } from 'htmlparser2';
import { projectRoot } from '../paths.js';
import { findProof, type ProofForms } from './proof-text.js';

export const PROOFS_FORMAT = 'idsvc-proofs/1';

const MAX_PATTERN = 500;
const MAX_TEMPLATE = 500;
const NAME = Type.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' });

const Location = Type.Object(
  {
    /** JSON: a dotted path (`*` any member, a number an index). HTML and XML: a selector (`tag.class#id[attr=value]@attr`). */
    at: Type.String({ minLength: 1, maxLength: 200 }),
    /** The field holds HTML (a Mastodon summary, Steam's summary in XML): read its text and link targets, entities decoded. */
    markup: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const Example = Type.Object(
  {
    note: Type.String({ minLength: 1, maxLength: 300 }),
    usrSvcId: Type.String({ minLength: 1, maxLength: 200 }),
    proofUrl: Type.Optional(Type.String({ maxLength: 2048 })),
    /** Values a lookup step would have found (e.g. GitLab's numeric user id). */
    vars: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 200 }))),
    status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
    /** The answer's body as sent; `json` is the same for JSON answers, written as JSON. */
    body: Type.Optional(Type.String({ maxLength: 100_000 })),
    json: Type.Optional(Type.Unknown()),
    expect: Type.Union([Type.Literal('verified'), Type.Literal('absent'), Type.Literal('transient')]),
  },
  { additionalProperties: false },
);

const ProviderSchema = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
    /** The catalogue's svcIds this definition proves identities of. */
    services: Type.Array(Type.String({ pattern: '^[a-z0-9]{1,64}$' }), { minItems: 1, maxItems: 500 }),
    /** A pattern the identity's profile URL must match; its named groups become variables (`host`, `user`). */
    profileUrl: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_PATTERN })),
    /** A proof the person points at (a gist): its address must match, and its `user` group name the identity. */
    proofUrl: Type.Optional(
      Type.Object(
        { pattern: Type.String({ minLength: 1, maxLength: MAX_PATTERN }), example: Type.String({ maxLength: 300 }) },
        { additionalProperties: false },
      ),
    ),
    /** A first request whose JSON answer gives a variable the proof's address needs (GitLab: the user's number). */
    lookup: Type.Optional(
      Type.Object(
        { url: Type.String({ minLength: 1, maxLength: MAX_TEMPLATE }), at: Type.String({ minLength: 1, maxLength: 200 }), as: NAME },
        { additionalProperties: false },
      ),
    ),
    fetch: Type.Object(
      { url: Type.String({ minLength: 1, maxLength: MAX_TEMPLATE }), accept: Type.Optional(Type.String({ maxLength: 200 })) },
      { additionalProperties: false },
    ),
    format: Type.Union([Type.Literal('json'), Type.Literal('html'), Type.Literal('xml'), Type.Literal('text')]),
    proof: Type.Object(
      {
        /** Where the proof must be; it counts when it is in any of them. Empty for text answers (the whole body). */
        in: Type.Array(Location, { maxItems: 20 }),
        relation: Type.Union([Type.Literal('contains'), Type.Literal('equals')]),
      },
      { additionalProperties: false },
    ),
    /** What ties the answer to the identity: each field must equal the template (the account, not a renamed or other one). */
    owner: Type.Optional(
      Type.Array(
        Type.Object(
          { at: Type.String({ minLength: 1, maxLength: 200 }), equals: Type.String({ minLength: 1, maxLength: 200 }), ignoreCase: Type.Boolean() },
          { additionalProperties: false },
        ),
        { maxItems: 5 },
      ),
    ),
    /** Answers besides 404 and 410 that say the account does not exist (Bluesky: 400 InvalidRequest). */
    missing: Type.Optional(
      Type.Array(
        Type.Object(
          {
            status: Type.Integer({ minimum: 400, maximum: 499 }),
            at: Type.Optional(Type.String({ maxLength: 200 })),
            equals: Type.Optional(Type.String({ maxLength: 200 })),
          },
          { additionalProperties: false },
        ),
        { maxItems: 5 },
      ),
    ),
    /** What the person does, shown on the account page. */
    steps: Type.String({ minLength: 1, maxLength: 1000 }),
    examples: Type.Array(Example, { minItems: 2, maxItems: 30 }),
  },
  { additionalProperties: false },
);

const FileSchema = Type.Object(
  { format: Type.Literal(PROOFS_FORMAT), providers: Type.Array(Type.Unknown(), { maxItems: 1000 }) },
  { additionalProperties: false },
);

export type ProofProviderDefinition = Static<typeof ProviderSchema>;
type LocationDef = Static<typeof Location>;

export interface ProofProvider extends ProofProviderDefinition {
  profileUrlPattern: RegExp | null;
  proofUrlPattern: RegExp | null;
}

export const DEFAULT_PROOFS_PATH = path.join(projectRoot, 'catalogue', 'proofs.json');

export function loadProofProviders(file: string = DEFAULT_PROOFS_PATH): ProofProvider[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  try {
    return parseProofProviders(json);
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
}

const TEMPLATE_VAR = /\{([a-z][a-z0-9_]{0,31})\}/g;

export function parseProofProviders(json: unknown): ProofProvider[] {
  if (!Value.Check(FileSchema, json)) {
    const first = Value.Errors(FileSchema, json).First();
    throw new Error(`proofs file: ${first ? `${first.path || '/'} ${first.message}` : 'is not an idsvc-proofs/1 object'}`);
  }
  const seen = new Set<string>();
  return json.providers.map((raw, index) => {
    const rawId = typeof raw === 'object' && raw !== null && 'id' in raw && typeof raw.id === 'string' && /^[a-z0-9-]{1,64}$/.test(raw.id) ? raw.id : null;
    const where = `providers[${index}]${rawId ? ` ("${rawId}")` : ''}`;
    const fail = (problem: string): never => {
      throw new Error(`${where}: ${problem}`);
    };
    if (!Value.Check(ProviderSchema, raw)) {
      const first = Value.Errors(ProviderSchema, raw).First();
      return fail(first ? `${first.path || '/'} ${first.message}` : 'is not a provider definition');
    }
    if (seen.has(raw.id)) fail('id is a duplicate');
    seen.add(raw.id);
    const profileUrlPattern = raw.profileUrl === undefined ? null : compile(raw.profileUrl, 'profileUrl', fail);
    const proofUrlPattern = raw.proofUrl === undefined ? null : compile(raw.proofUrl.pattern, 'proofUrl.pattern', fail);
    if (proofUrlPattern && !groupNames(raw.proofUrl!.pattern).includes('user'))
      fail('proofUrl.pattern must have a named group "user", tying the proof to the identity');
    if (raw.format !== 'text' && raw.proof.in.length === 0) fail('proof.in must name at least one place for JSON and HTML answers');
    const markupFormat = raw.format === 'html' || raw.format === 'xml';
    if (markupFormat)
      for (const l of raw.proof.in) if (parseSelector(l.at) === null) fail(`proof.in "${l.at}" is not a selector of the form tag.class#id[attr=value]@attr`);
    if (markupFormat && raw.owner?.some((o) => parseSelector(o.at) === null)) fail('owner.at must be a selector for HTML and XML answers');
    // Every variable a template names must be one the definition gives, or a URL would keep a literal "{x}".
    const known = new Set(['id', 'user', ...(raw.profileUrl ? groupNames(raw.profileUrl) : []), ...(raw.proofUrl ? groupNames(raw.proofUrl.pattern) : [])]);
    if (raw.lookup) {
      checkTemplate(raw.lookup.url, 'lookup.url', known, fail);
      known.add(raw.lookup.as);
    }
    checkTemplate(raw.fetch.url, 'fetch.url', known, fail);
    for (const o of raw.owner ?? []) checkTemplate(o.equals, 'owner.equals', known, fail, false);
    return { ...raw, profileUrlPattern, proofUrlPattern };
  });
}

function compile(source: string, field: string, fail: (p: string) => never): RegExp {
  if (!source.startsWith('^') || !source.endsWith('$')) fail(`${field} must be anchored with ^ and $`);
  try {
    return new RegExp(source);
  } catch (err) {
    return fail(`${field} is not a valid regular expression (${(err as Error).message})`);
  }
}

function groupNames(source: string): string[] {
  return [...source.matchAll(/\(\?<([A-Za-z][A-Za-z0-9_]{0,31})>/g)].map((m) => m[1]!);
}

function checkTemplate(template: string, field: string, known: Set<string>, fail: (p: string) => never, mustBeUrl = true): void {
  for (const m of template.matchAll(TEMPLATE_VAR)) if (!known.has(m[1]!)) fail(`${field} names {${m[1]}}, which this definition does not give`);
  if (!mustBeUrl) return;
  const sample = template.replace(TEMPLATE_VAR, 'x');
  if (!URL.canParse(sample) || !['https:', 'http:'].includes(new URL(sample).protocol)) fail(`${field} must be an http(s) URL template`);
}

/** What a definition needs to know of an identity: its values by name, or why it cannot be asked. */
export type Variables = Record<string, string>;

/** The identity's variables from its profile URL, or null when the definition is not for it. */
export function identityVariables(p: ProofProvider, svcId: string, usrSvcId: string, profileUrl: string): Variables | null {
  if (!p.services.includes(svcId)) return null;
  const vars: Variables = { id: usrSvcId, user: usrSvcId };
  // `.` and `..` are dot-segments to a URL parser (even as %2E): they would name another resource.
  const unusable = (v: string) => v === '' || v === '.' || v === '..';
  if (p.profileUrlPattern) {
    // Profile URLs are built from a template with the identifier escaped: at most a few kB.
    if (profileUrl.length > 2048) return null;
    const m = p.profileUrlPattern.exec(profileUrl);
    if (!m) return null;
    for (const [k, v] of Object.entries(m.groups ?? {})) if (v !== undefined) vars[k] = safeDecode(v);
  }
  return Object.values(vars).some(unusable) ? null : vars;
}

/** Adds the groups of a proof URL the person gave; null when it is not one this definition reads, or names another account. */
export function proofUrlVariables(p: ProofProvider, vars: Variables, proofUrl: string): { vars: Variables } | { refused: string } | null {
  if (!p.proofUrlPattern || proofUrl.length > 2048) return null;
  const m = p.proofUrlPattern.exec(proofUrl.trim());
  if (!m) return null;
  const out: Variables = { ...vars };
  for (const [k, v] of Object.entries(m.groups ?? {})) if (v !== undefined && k !== 'user') out[k] = safeDecode(v);
  const named = safeDecode(m.groups?.user ?? '');
  if (named.toLowerCase() !== vars.user!.toLowerCase()) return { refused: `the proof address belongs to ${named}, not to ${vars.user}` };
  return { vars: out };
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/** Fills a URL template, each value percent-encoded so that it cannot leave its component. */
export function fillUrl(template: string, vars: Variables): string {
  return template.replace(TEMPLATE_VAR, (_m, name: string) => encodeURIComponent(vars[name] ?? ''));
}

function fillText(template: string, vars: Variables): string {
  return template.replace(TEMPLATE_VAR, (_m, name: string) => vars[name] ?? '');
}

// ——— Reading an answer ———

/** The most values one path or selector collects: a wildcard over a huge array stops here. */
const MAX_VALUES = 500;

/** Values at a dotted path (`a.*.b`, `items.0.about_me`); strings and numbers only. */
export function valuesAt(root: unknown, pathText: string): string[] {
  let current: unknown[] = [root];
  for (const step of pathText.split('.')) {
    const next: unknown[] = [];
    for (const v of current) {
      if (typeof v !== 'object' || v === null) continue;
      if (step === '*') next.push(...(Array.isArray(v) ? v : Object.values(v)));
      else if (Array.isArray(v)) {
        if (/^\d{1,6}$/.test(step)) next.push(v[Number(step)]);
      } else if (Object.hasOwn(v, step)) next.push((v as Record<string, unknown>)[step]);
      if (next.length > MAX_VALUES) break;
    }
    current = next.slice(0, MAX_VALUES);
  }
  return current.filter((v) => typeof v === 'string' || typeof v === 'number').map(String);
}

interface Selector {
  tag: string | null;
  id: string | null;
  classes: string[];
  attr: { name: string; value: string } | null;
  take: string | null;
}

const SELECTOR = /^([A-Za-z][A-Za-z0-9-]{0,31})?(#[A-Za-z0-9_-]{1,64})?((?:\.[A-Za-z0-9_-]{1,64}){0,5})(\[[a-z-]{1,32}=[^\]]{1,100}\])?(@[a-z-]{1,32})?$/;

export function parseSelector(text: string): Selector | null {
  const m = SELECTOR.exec(text);
  if (!m || text === '') return null;
  const [, tag, id, classes, attr, take] = m;
  const eq = attr ? attr.indexOf('=') : -1;
  return {
    tag: tag ?? null,
    id: id ? id.slice(1) : null,
    classes: classes ? classes.split('.').filter(Boolean) : [],
    attr: attr ? { name: attr.slice(1, eq), value: attr.slice(eq + 1, -1) } : null,
    take: take ? take.slice(1) : null,
  };
}

type Doc = ReturnType<typeof parseDocument>;

/**
 * htmlparser2 takes time quadratic in the depth of nesting (each closing tag searches the open
 * ones), so an answer is parsed only while its tags stay within a budget: a few thousand cost
 * milliseconds, and a real profile has a few dozen.
 */
const MAX_TAGS = 4000;

class TagBudget {
  left = MAX_TAGS;
}

class TooMuchMarkup extends Error {}

function parseBounded(html: string, budget: TagBudget, xmlMode = false): Doc {
  let tags = 0;
  for (let at = html.indexOf('<'); at !== -1 && tags <= budget.left; at = html.indexOf('<', at + 1)) tags++;
  if (tags > budget.left) throw new TooMuchMarkup();
  budget.left -= tags;
  return parseDocument(html, { decodeEntities: true, xmlMode });
}
type DomNode = Doc['children'][number];

// Elements whose edges separate words: without a break, `<p>a</p><p>b</p>` would read "ab".
const BLOCKS = new Set([
  'p',
  'br',
  'div',
  'li',
  'ul',
  'ol',
  'tr',
  'td',
  'th',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'blockquote',
  'pre',
  'dd',
  'dt',
  'hr',
  'section',
  'article',
]);

/**
 * The text of a node with entities decoded and a line break at block edges. A loop, not recursion:
 * an answer of nested tags half a megabyte deep must not exhaust the stack.
 */
function textOf(root: DomNode | Doc): string {
  const out: string[] = [];
  const stack: (DomNode | Doc | string)[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (typeof node === 'string') {
      out.push(node);
      continue;
    }
    if (node.type === 'text') {
      out.push((node as { data: string }).data);
      continue;
    }
    if (!('children' in node)) continue;
    const name = 'name' in node ? (node as { name: string }).name : '';
    if (name === 'script' || name === 'style') continue;
    const block = BLOCKS.has(name);
    if (block) stack.push('\n');
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
    if (block) stack.push('\n');
  }
  return out.join('');
}

type Element = { name: string; attribs: Record<string, string> } & DomNode;

/** Elements in document order that pass the test, at most MAX_VALUES; a stack that only grows at its end, so the walk is linear at any depth. */
function findElements(root: Doc, test: (el: Element) => boolean): Element[] {
  const found: Element[] = [];
  const stack: DomNode[] = [...root.children].reverse();
  while (stack.length > 0 && found.length < MAX_VALUES) {
    const node = stack.pop()!;
    if ('attribs' in node && test(node as Element)) found.push(node as Element);
    if ('children' in node) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  return found;
}

function selectAll(doc: Doc, sel: Selector): string[] {
  const found = findElements(doc, (el) => {
    if (sel.tag !== null && el.name !== sel.tag) return false;
    if (sel.id !== null && el.attribs.id !== sel.id) return false;
    if (sel.classes.length > 0) {
      const have = (el.attribs.class ?? '').split(/[\t\n\f\r ]+/);
      if (!sel.classes.every((c) => have.includes(c))) return false;
    }
    if (sel.attr !== null && el.attribs[sel.attr.name] !== sel.attr.value) return false;
    return true;
  });
  return found.map((el) => (sel.take !== null ? (el.attribs[sel.take] ?? '') : textOf(el)));
}

/** The readable forms of an HTML fragment: its text (entities decoded) and its links' targets. */
function markupTexts(html: string, budget: TagBudget): string[] {
  const doc = parseBounded(html, budget);
  const hrefs = findElements(doc, (el) => typeof el.attribs.href === 'string').map((el) => el.attribs.href ?? '');
  return [textOf(doc), ...hrefs];
}

export type AnswerReading = { result: 'verified'; detail: string } | { result: 'absent'; detail: string } | { result: 'transient'; detail: string };

export interface Answer {
  status: number;
  body: string;
  /** The body was cut at the size cap: a proof not found may be past the cut. */
  truncated: boolean;
}

function describeWhere(p: ProofProvider): string {
  if (p.format === 'text') return 'the page';
  return p.proof.in.map((l) => `"${l.at}"`).join(' or ');
}

/**
 * Reads one answer of the service: a definite `absent` only when the answer was read and the
 * account is gone or the proof is not where it must be; anything that kept us from reading is
 * `transient`. Status 429 and 5xx are the caller's to judge first (they carry Retry-After).
 */
export function readAnswer(p: ProofProvider, vars: Variables, answer: Answer, forms: ProofForms): AnswerReading {
  const gone = { result: 'absent' as const, detail: `${p.name} has no account ${vars.user} (HTTP ${answer.status})` };
  let json: unknown;
  let parsed = false;
  const parseJson = (): boolean => {
    if (!parsed) {
      parsed = true;
      try {
        json = JSON.parse(answer.body);
      } catch {
        return false;
      }
    }
    return true;
  };
  if (answer.status === 404 || answer.status === 410) return gone;
  for (const rule of p.missing ?? []) {
    if (rule.status !== answer.status) continue;
    if (rule.at === undefined) return gone;
    if (parseJson() && valuesAt(json, rule.at).some((v) => v === rule.equals)) return gone;
  }
  if (answer.status < 200 || answer.status > 299) return { result: 'transient', detail: `${p.name} answered HTTP ${answer.status}` };

  try {
    return readBody(p, vars, answer, forms, () => json, parseJson);
  } catch (err) {
    if (err instanceof TooMuchMarkup) return { result: 'transient', detail: `${p.name}'s answer has more markup than is read` };
    throw err;
  }
}

function readBody(p: ProofProvider, vars: Variables, answer: Answer, forms: ProofForms, parsedJson: () => unknown, parseJson: () => boolean): AnswerReading {
  const budget = new TagBudget();
  let places: { where: string; values: string[] }[];
  let ownerValues: (at: string) => string[];
  if (p.format === 'json') {
    if (answer.truncated || !parseJson()) return { result: 'transient', detail: `${p.name}'s answer could not be read as JSON` };
    const json = parsedJson();
    places = p.proof.in.map((l: LocationDef) => ({ where: l.at, values: valuesAt(json, l.at).flatMap((v) => (l.markup ? markupTexts(v, budget) : [v])) }));
    ownerValues = (at) => valuesAt(json, at);
  } else if (p.format === 'html' || p.format === 'xml') {
    const doc = parseBounded(answer.body, budget, p.format === 'xml');
    // An XML answer may carry HTML as text (Steam's summary, in CDATA): `markup` reads it as such.
    places = p.proof.in.map((l) => ({ where: l.at, values: selectAll(doc, parseSelector(l.at)!).flatMap((v) => (l.markup ? markupTexts(v, budget) : [v])) }));
    ownerValues = (at) => selectAll(doc, parseSelector(at)!);
  } else {
    places = [{ where: 'the page', values: [answer.body] }];
    ownerValues = () => [];
  }

  for (const o of p.owner ?? []) {
    const want = fillText(o.equals, vars);
    const have = ownerValues(o.at);
    const same = have.some((h) => (o.ignoreCase ? h.trim().toLowerCase() === want.toLowerCase() : h.trim() === want));
    if (!same) {
      const shown = have[0] === undefined ? 'no account' : `"${have[0].slice(0, 64)}"`;
      return { result: 'absent', detail: `${p.name}'s answer names ${shown} at "${o.at}", not ${want}: the account is gone or renamed` };
    }
  }

  for (const place of places) {
    for (const value of place.values) {
      const hit = findProof(value, forms, p.proof.relation);
      if (hit) return { result: 'verified', detail: `found ${hit} in "${place.where}" of ${p.name}'s answer` };
    }
  }
  if (answer.truncated) return { result: 'transient', detail: `${p.name}'s answer was longer than can be read, and the proof was not in the part read` };
  const looked = `looked for ${forms.profileUrl} or ${forms.short} in ${describeWhere(p)}`;
  const empty = places.every((pl) => pl.values.every((v) => v.trim() === ''));
  return { result: 'absent', detail: `${looked} of ${p.name}'s answer and found ${empty ? 'nothing there' : 'other text'}` };
}

let configured: readonly ProofProvider[] | null = null;

/** The configured definitions (PROOF_PROVIDERS), handed over once the configuration is read. */
export function useProofProviders(providers: readonly ProofProvider[]): void {
  configured = providers;
}

/** The configured definitions once start-up has read them, the shipped file before that. */
export function configuredProofProviders(): readonly ProofProvider[] {
  configured ??= loadProofProviders();
  return configured;
}
