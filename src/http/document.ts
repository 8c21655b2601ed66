// One answer model, two wire formats (SPEC §8): the operations build a Doc; render() turns it into
// XML (via fast-xml-parser's builder) or the JSON twin with the same field names.
import { XMLBuilder } from 'fast-xml-parser';

/** A list of elements named `item` (XML) or a JSON array. */
export interface ListNode {
  readonly item: string;
  readonly items: readonly Fields[];
}
export type Value = string | ListNode;
export type Fields = { readonly [name: string]: Value };

export type Doc =
  | { readonly root: string; readonly text: string }
  | { readonly root: string; readonly fields: Fields }
  | { readonly root: string; readonly list: ListNode };

export const list = (item: string, items: readonly Fields[]): ListNode => ({ item, items });

// Characters XML 1.0 cannot carry at all; stored text is cleaned on the way out so an answer is
// well-formed whatever was stored.
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
export const xmlSafe = (s: string) => s.replace(XML_INVALID, '\uFFFD');

function isList(v: Value): v is ListNode {
  return typeof v === 'object';
}

type XmlTree = { [k: string]: string | XmlTree | XmlTree[] };

function toXmlFields(fields: Fields): XmlTree {
  const out: XmlTree = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = isList(v) ? toXmlList(v) : xmlSafe(v);
  }
  return out;
}

function toXmlList(l: ListNode): XmlTree | string {
  return l.items.length === 0 ? '' : { [l.item]: l.items.map(toXmlFields) };
}

const builder = new XMLBuilder({ format: false, suppressEmptyNode: true, processEntities: true });
const PROLOG = '<?xml version="1.0" encoding="UTF-8"?>\n';

export function toXml(doc: Doc): string {
  let body: XmlTree | string;
  if ('text' in doc) body = xmlSafe(doc.text);
  else if ('fields' in doc) body = toXmlFields(doc.fields);
  else body = toXmlList(doc.list);
  return PROLOG + builder.build({ [doc.root]: body }) + '\n';
}

function toJsonFields(fields: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = isList(v) ? v.items.map(toJsonFields) : v;
  return out;
}

export function toJson(doc: Doc): string {
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
  return format === 'json' ? toJson(doc) : toXml(doc);
}
