// What "a well-formed answer" means for each content type the server sends (issue 20): XML that a
// strict parser accepts (SVG avatars too), JSON that parses, a script that compiles, an HTML page with a doctype.
import assert from 'node:assert/strict';
import vm from 'node:vm';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

export type AnswerKind = 'xml' | 'json' | 'script' | 'html' | 'empty';

/** The kind of body a Content-Type announces; throws on a type the API and site never send. */
export function kindOf(contentType: string | undefined | null, status: number, body: string): AnswerKind {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (body === '' && (status === 204 || status === 304 || type === '')) return 'empty';
  // The Gravatar-compatible avatars are SVG: XML that a strict parser accepts, too.
  if (type === 'application/xml' || type === 'image/svg+xml') return 'xml';
  if (type === 'application/json') return 'json';
  if (type === 'text/javascript') return 'script';
  if (type === 'text/html') return 'html';
  throw new assert.AssertionError({ message: `unexpected Content-Type ${JSON.stringify(contentType)} (status ${status}): ${body.slice(0, 200)}` });
}

/** Asserts the body is well formed for its type and returns the parsed value (XML and JSON). */
export function assertWellFormed(contentType: string | undefined | null, status: number, body: string): { kind: AnswerKind; parsed?: unknown } {
  const kind = kindOf(contentType, status, body);
  if (kind === 'xml') {
    const valid = XMLValidator.validate(body);
    assert.equal(valid, true, `malformed XML (${JSON.stringify(valid)}): ${body.slice(0, 300)}`);
    return { kind, parsed: new XMLParser({ parseTagValue: false }).parse(body, true) };
  }
  if (kind === 'json') return { kind, parsed: JSON.parse(body) };
  if (kind === 'script') {
    // Compiled, not run: a syntax error throws here.
    new vm.Script(body, { filename: 'answer.js' });
    return { kind };
  }
  if (kind === 'html') {
    // Only blanks and comments may come before the doctype (Swagger UI's page at /docs opens with one).
    assert.match(body, /^\s*(?:<!--[\s\S]*?-->\s*)*<!doctype html>/i, `an HTML page without a doctype: ${body.slice(0, 200)}`);
    assert.match(body, /<\/html>\s*$/i, 'an HTML page cut short');
    return { kind };
  }
  return { kind };
}

/** The `{code, message}` of an XML or JSON error body. */
export function errorOf(kind: AnswerKind, parsed: unknown): { code: string; message: string } | undefined {
  if (kind !== 'xml' && kind !== 'json') return undefined;
  const err = (parsed as { error?: { code?: unknown; message?: unknown } }).error;
  return err ? { code: String(err.code), message: String(err.message) } : undefined;
}
