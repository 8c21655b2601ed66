// One answer model, two wire formats (SPEC §8): the operations build a Doc; render() turns it into
// XML or the JSON twin with the same field names.
import type { TaggedBody } from './cache-headers.js';

/** A list of elements named `item` (XML) or a JSON array. */
export interface ListNode {
  readonly item: string;
  readonly items: readonly Fields[];
}
/** A boolean is written `TRUE`/`FALSE` in XML (what DandyID clients parse) and as a JSON boolean. */
export type Value = string | boolean | ListNode;
export type Fields = { readonly [name: string]: Value };

/** An answer as the operations build it. */
export type BuiltDoc =
  | { readonly root: string; readonly text: string }
  | { readonly root: string; readonly fields: Fields }
  | { readonly root: string; readonly list: ListNode };

/** An answer already rendered in the request's format, with its ETag when asked for (kept by the answer cache, api/cached-views.ts). */
export type Doc = BuiltDoc | { readonly root: string; readonly rendered: TaggedBody };

export const list = (item: string, items: readonly Fields[]): ListNode => ({ item, items });

// Characters XML 1.0 cannot carry at all; stored text is cleaned on the way out so an answer is
// well-formed whatever was stored.
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
export const xmlSafe = (s: string) => s.replace(XML_INVALID, '\uFFFD');

function isList(v: Value): v is ListNode {
  return typeof v === 'object';
}

// The XML is written directly rather than through fast-xml-parser's XMLBuilder, which walks a
// generic tree (name validation, path matching) and cost more than the rest of a return_services
// answer. The output is byte for byte what the builder wrote with { format: false,
// suppressEmptyNode: true, processEntities: true } (test/http/document.test.ts compares the two):
// the five entities escaped, an empty value or list written as `<name/>`.
const ENTITY = /[&<>'"]/;
const ENTITIES = /[&<>'"]/g;
const ENTITY_OF: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', "'": '&apos;', '"': '&quot;' };
const escapeText = (s: string) => (ENTITY.test(s) ? s.replace(ENTITIES, (c) => ENTITY_OF[c]!) : s);

// Nearly every value is plain text: one scan for anything that may need work (an entity, a
// character XML cannot carry, any surrogate) lets the common case skip both replacements.
const MAY_NEED_WORK = /[&<>'"\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;
const xmlText = (s: string) => (MAY_NEED_WORK.test(s) ? escapeText(xmlSafe(s)) : s);

/** An element's opening, closing and empty tags, made once per name: every answer repeats the same few names. */
interface Tags {
  readonly open: string;
  readonly close: string;
  readonly empty: string;
}
const tagsByName = new Map<string, Tags>();
function tagsOf(name: string): Tags {
  let tags = tagsByName.get(name);
  if (!tags) {
    tags = { open: `<${name}>`, close: `</${name}>`, empty: `<${name}/>` };
    // Names come from the operations' own code, never from input: the map stays as small as the API.
    tagsByName.set(name, tags);
  }
  return tags;
}

/** `<name>content</name>`, or `<name/>` when the content is empty. */
function element(name: string, content: string): string {
  const tags = tagsOf(name);
  return content === '' ? tags.empty : tags.open + content + tags.close;
}

// Each answer is appended to one string, piece by piece: every intermediate string (an element
// wrapped around its content, then appended) would be one more object for the collector.
function fieldsXml(fields: Fields): string {
  let out = '';
  for (const k in fields) {
    const v = fields[k]!;
    const content = typeof v === 'boolean' ? (v ? 'TRUE' : 'FALSE') : isList(v) ? listXml(v) : xmlText(v);
    const tags = tagsOf(k);
    if (content === '') out += tags.empty;
    else {
      out += tags.open;
      out += content;
      out += tags.close;
    }
  }
  return out;
}

function listXml(l: ListNode): string {
  const tags = tagsOf(l.item);
  let out = '';
  for (const item of l.items) {
    const content = fieldsXml(item);
    if (content === '') out += tags.empty;
    else {
      out += tags.open;
      out += content;
      out += tags.close;
    }
  }
  return out;
}

export const PROLOG = '<?xml version="1.0" encoding="UTF-8"?>\n';

/**
 * One element with its text escaped, as render() writes a field (`<name/>` when empty): for an
 * answer written straight from its rows, without building Fields first (api/shared.ts).
 */
export function xmlField(name: string, text: string): string {
  return element(name, xmlText(text));
}

export function toXml(doc: BuiltDoc): string {
  let body: string;
  if ('text' in doc) body = xmlText(doc.text);
  else if ('fields' in doc) body = fieldsXml(doc.fields);
  else body = listXml(doc.list);
  return `${PROLOG}${element(doc.root, body)}\n`;
}

function toJsonFields(fields: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = isList(v) ? v.items.map(toJsonFields) : v;
  return out;
}

export function toJson(doc: BuiltDoc): string {
  let body: unknown;
  if ('text' in doc) body = doc.text;
  else if ('fields' in doc) body = toJsonFields(doc.fields);
  else body = doc.list.items.map(toJsonFields);
  return JSON.stringify({ [doc.root]: body });
}

export type Format = 'xml' | 'json';
export const CONTENT_TYPE: Record<Format, string> = {
  xml: 'application/xml; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

export function render(doc: Doc, format: Format): string {
  if ('rendered' in doc) return doc.rendered.body;
  return format === 'json' ? toJson(doc) : toXml(doc);
}
