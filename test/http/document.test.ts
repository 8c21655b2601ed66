// toXml writes XML by hand for speed; it must stay byte for byte what fast-xml-parser's builder
// wrote before (the wire format partners parse). Random documents, including every character class
// that needs escaping or replacing, are rendered both ways.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { XMLBuilder } from 'fast-xml-parser';
import { list, toJson, toXml, xmlSafe, type BuiltDoc, type Fields, type ListNode } from '../../src/http/document.js';
import { userServiceFieldsFor, userServicesXml } from '../../src/api/shared.js';
import type { ViewEntry } from '../../src/services/partner-data.js';

type Tree = { [k: string]: string | Tree | Tree[] };
const builder = new XMLBuilder({ format: false, suppressEmptyNode: true, processEntities: true });
const fieldsTree = (f: Fields): Tree => {
  const out: Tree = {};
  // A boolean is written TRUE/FALSE in XML, as the strings were before booleans came in.
  for (const [k, v] of Object.entries(f)) out[k] = typeof v === 'object' ? listTree(v) : typeof v === 'boolean' ? (v ? 'TRUE' : 'FALSE') : xmlSafe(v);
  return out;
};
const listTree = (l: ListNode): Tree | string => (l.items.length === 0 ? '' : { [l.item]: l.items.map(fieldsTree) });
function reference(doc: BuiltDoc): string {
  const body = 'text' in doc ? xmlSafe(doc.text) : 'fields' in doc ? fieldsTree(doc.fields) : listTree(doc.list);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({ [doc.root]: body })}\n`;
}

const PIECES = [
  '',
  'a',
  'neil simon',
  '&',
  '<',
  '>',
  "'",
  '"',
  '&amp;',
  ']]>',
  '\u0000',
  '\u0008',
  '\t',
  '\n',
  '\r',
  '\u001F',
  '\uFFFE',
  '\uD800',
  '\uDC00',
  '\uD83D\uDE00',
  'é',
  '\u2028',
  'https://x.example/?a=1&b=2',
];
let seed = 42;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};
const text = () => Array.from({ length: rand(4) }, () => PIECES[rand(PIECES.length)]).join('');
const fields = (depth: number): Fields => {
  const out: Record<string, string | boolean | ListNode> = {};
  for (const name of ['svcId', 'svcName', 'usrSvcId', 'url', 'verified'].slice(0, rand(6))) {
    out[name] =
      depth > 0 && rand(4) === 0
        ? list(
            'service',
            Array.from({ length: rand(3) }, () => fields(depth - 1)),
          )
        : name === 'verified'
          ? rand(2) === 0
          : text();
  }
  return out;
};

test('toXml writes exactly what the XML builder wrote', () => {
  for (let i = 0; i < 2000; i++) {
    const kind = rand(3);
    const doc: BuiltDoc =
      kind === 0
        ? { root: 'error', text: text() }
        : kind === 1
          ? { root: 'service', fields: fields(2) }
          : {
              root: 'services',
              list: list(
                'service',
                Array.from({ length: rand(4) }, () => fields(1)),
              ),
            };
    assert.equal(toXml(doc), reference(doc), JSON.stringify(doc));
  }
  assert.equal(toXml({ root: 'services', list: list('service', []) }), '<?xml version="1.0" encoding="UTF-8"?>\n<services/>\n');
});

test('a boolean is TRUE or FALSE in XML and a boolean in JSON', () => {
  const doc: BuiltDoc = {
    root: 'users',
    list: list('user', [
      { userId: 'a', verified: true },
      { userId: 'b', verified: false },
    ]),
  };
  assert.equal(
    toXml(doc),
    '<?xml version="1.0" encoding="UTF-8"?>\n<users><user><userId>a</userId><verified>TRUE</verified></user><user><userId>b</userId><verified>FALSE</verified></user></users>\n',
  );
  assert.equal(toJson(doc), '{"users":[{"userId":"a","verified":true},{"userId":"b","verified":false}]}');
});

test('return_services XML written straight from the entries is what render() makes of their fields', () => {
  // Random catalogue entries and identifiers, with every piece above in names, ids and favicons;
  // templates in path, query and host position, a builder, and none (an empty url).
  const templates = [
    { svcLeftURL: 'https://x.example/', svcRightURL: '', urlBuilder: null },
    { svcLeftURL: 'https://x.example/?id=', svcRightURL: '&x=1', urlBuilder: null },
    { svcLeftURL: 'https://', svcRightURL: '.x.example/', urlBuilder: null },
    { svcLeftURL: '', svcRightURL: '', urlBuilder: null },
    { svcLeftURL: '', svcRightURL: '', urlBuilder: 'website' as const },
  ];
  const entry = (): ViewEntry => ({
    svc: {
      svcId: `s${rand(100)}${text()}`,
      svcName: text(),
      svcURL: '',
      svcMobileURL: '',
      svcIphoneURL: '',
      svcFavicon: text(),
      svcIcon: '',
      svcIphoneIcon: '',
      regexCheck: null,
      disabled: false,
      ...templates[rand(templates.length)]!,
    },
    usrSvcId: rand(3) === 0 ? 'neil.simon' : text(),
    showUsrSvcId: rand(2) === 0,
    verified: rand(2) === 0,
    updatedAt: 0,
    evidence: null,
  });
  for (let i = 0; i < 1000; i++) {
    const entries = Array.from({ length: rand(5) }, entry);
    const model = toXml({ root: 'services', list: list('service', entries.map(userServiceFieldsFor('xml'))) });
    assert.equal(userServicesXml(entries), model, JSON.stringify(entries));
  }
});
