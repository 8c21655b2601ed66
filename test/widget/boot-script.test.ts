import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import vm from 'node:vm';
import {
  renderWidgetBootScript,
  renderWidgetBootScriptWith,
  renderWidgetErrorScript,
  servicesJson,
  type WidgetBootConfig,
} from '../../src/widget/boot-script.js';
import { KeptBootScript } from '../../src/widget/kept-boot-script.js';

const NASTY = [
  '</script><script>alert(1)</script>',
  '</SCRIPT >',
  '"',
  "'",
  '\u2028',
  '\u2029',
  '<!--',
  '-->',
  '<![CDATA[',
  '\\u003c',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a hostile value must reach the page as these literal characters
  '`${alert(1)}`',
  '\u0000\u001f',
  '💥 é ß',
  '&amp;&lt;',
];

function config(overrides: Partial<WidgetBootConfig> = {}): WidgetBootConfig {
  return {
    apiBase: 'http://127.0.0.1:8080',
    apiKey: 'a'.repeat(32),
    userIdentifier: NASTY.join(''),
    displaySync: true,
    lang: 'en',
    view: 'public',
    warning: 'bad </script> signature',
    services: NASTY.map((s, i) => ({
      svcId: `svc${i}`,
      svcName: s,
      usrSvcId: s,
      url: `https://example.com/${s}`,
      verified: i % 2 === 0,
      svcFavicon: 'https://example.com/favicon.ico',
    })),
    siteName: NASTY.join(''),
    signUpUrl: 'http://127.0.0.1:8080/signup',
    catalogueUrl: 'http://127.0.0.1:8080/api/catalogue.json',
    bundleUrl: 'http://127.0.0.1:8080/widget/widget.0123abcd.js',
    ...overrides,
  };
}

interface FakeElement {
  tag: string;
  src?: string;
  async?: boolean;
  nonce?: string;
}

/** A page just big enough for the boot script: window, document.currentScript, <head>. */
function fakePage() {
  const appended: FakeElement[] = [];
  const errors: string[] = [];
  const document = {
    currentScript: null as FakeElement | null,
    head: { appendChild: (el: FakeElement) => appended.push(el) },
    documentElement: { appendChild: (el: FakeElement) => appended.push(el) },
    createElement: (tag: string): FakeElement => ({ tag }),
  };
  const context = vm.createContext({ document, console: { error: (m: string) => errors.push(m) } });
  vm.runInContext('var window = this;', context);
  const run = (source: string, script: FakeElement | null = { tag: 'script' }) => {
    document.currentScript = script;
    vm.runInContext(source, context);
    document.currentScript = null; // as in a browser: only set while the script runs
  };
  return { context: context as Record<string, unknown>, run, appended, errors };
}

describe('renderWidgetBootScript', () => {
  test('the config round-trips byte for byte, nasty strings included', () => {
    const cfg = config();
    const page = fakePage();
    page.run(renderWidgetBootScript(cfg));
    const queue = page.context.__idsvc_widget_queue as { config: WidgetBootConfig }[];
    assert.equal(queue.length, 1);
    // Compare through JSON in this realm: the vm's objects have another Object.prototype.
    assert.deepEqual(JSON.parse(JSON.stringify(queue[0]!.config)), cfg);
    assert.equal(queue[0]!.config.userIdentifier, NASTY.join(''));
    NASTY.forEach((s, i) => {
      assert.equal(queue[0]!.config.services[i]!.usrSvcId, s);
    });
  });

  test('services rendered once (as the answer cache keeps them) go into every boot script as they were given', () => {
    const { services, ...rest } = config();
    const kept = servicesJson(services);
    assert.doesNotMatch(kept, /[<>\u2028\u2029]/, 'escaped when kept, not when sent');
    const page = fakePage();
    page.run(renderWidgetBootScriptWith({ ...rest, userIdentifier: 'alice' }, kept));
    page.run(renderWidgetBootScriptWith({ ...rest, userIdentifier: 'bob' }, kept));
    page.run(renderWidgetBootScriptWith({ ...rest, userIdentifier: 'nobody' }, servicesJson([])));
    const queue = page.context.__idsvc_widget_queue as { config: WidgetBootConfig }[];
    // Through JSON into this realm, as above.
    assert.deepEqual(JSON.parse(JSON.stringify(queue.map((q) => [q.config.userIdentifier, q.config.services, q.config.siteName]))), [
      ['alice', services, rest.siteName],
      ['bob', services, rest.siteName],
      ['nobody', [], rest.siteName],
    ]);
  });

  test('a kept boot script is the script rendered for its request, and gives its services back byte for byte', () => {
    const { services, ...rest } = config(); // NASTY holds characters of two, three and four bytes
    const json = servicesJson(services);
    const kept = KeptBootScript.render(rest, 'for this request', json);
    assert.equal(kept.bytes.toString(), renderWidgetBootScriptWith(rest, json));
    assert.equal(kept.services, json);
    assert.equal(kept.renderedFor, 'for this request');
    assert.equal(kept.size, kept.bytes.length + 100, 'counted for the answer cache as its bytes and their Buffer');
    const other = { ...rest, userIdentifier: 'bob' };
    assert.equal(renderWidgetBootScriptWith(other, kept.services), renderWidgetBootScriptWith(other, json));
  });

  test('the source can sit inside an HTML <script> element', () => {
    const source = renderWidgetBootScript(config());
    assert.doesNotMatch(source, /<\/script/i);
    assert.doesNotMatch(source, /<!--/);
    assert.doesNotMatch(source, /-->/);
    assert.doesNotMatch(source, /[<>\u2028\u2029]/);
    assert.ok(!source.includes('&amp;'), 'a raw & in a value would let XHTML pages read entities');
  });

  test('captures document.currentScript and loads the bundle once for several widgets', () => {
    const page = fakePage();
    const first = { tag: 'script', nonce: 'n0nce' };
    const second = { tag: 'script' };
    page.run(renderWidgetBootScript(config({ userIdentifier: 'alice' })), first);
    page.run(renderWidgetBootScript(config({ userIdentifier: 'bob' })), second);
    const queue = page.context.__idsvc_widget_queue as { config: WidgetBootConfig; script: unknown }[];
    assert.equal(queue.length, 2);
    assert.equal(queue[0]!.config.userIdentifier, 'alice');
    assert.equal(queue[0]!.script, first);
    assert.equal(queue[1]!.config.userIdentifier, 'bob');
    assert.equal(queue[1]!.script, second);
    assert.equal(page.appended.length, 1);
    assert.equal(page.appended[0]!.tag, 'script');
    assert.equal(page.appended[0]!.src, 'http://127.0.0.1:8080/widget/widget.0123abcd.js');
    assert.equal(page.appended[0]!.async, true);
    assert.equal(page.appended[0]!.nonce, 'n0nce', 'a CSP nonce carries over to the bundle');
  });

  test('once the bundle replaced the queue, a later widget is handed to it directly', () => {
    const page = fakePage();
    const received: unknown[] = [];
    page.context.__idsvc_widget_queue = { idsvc: true, push: (item: unknown) => received.push(item) };
    page.run(renderWidgetBootScript(config({ userIdentifier: 'carol' })));
    assert.equal(received.length, 1);
    assert.equal((received[0] as { config: WidgetBootConfig }).config.userIdentifier, 'carol');
    assert.equal(page.appended.length, 0, 'the bundle is not loaded a second time');
  });

  test('works without document.currentScript', () => {
    const page = fakePage();
    page.run(renderWidgetBootScript(config()), null);
    const queue = page.context.__idsvc_widget_queue as { script: unknown }[];
    assert.equal(queue[0]!.script, null);
    assert.equal(page.appended.length, 1);
  });
});

describe('renderWidgetErrorScript', () => {
  test('only reports the error, with nasty text intact', () => {
    for (const nasty of NASTY) {
      const page = fakePage();
      const source = renderWidgetErrorScript('forbidden', nasty);
      assert.doesNotMatch(source, /<\/script|<!--|[<>\u2028\u2029]/i);
      page.run(source);
      assert.deepEqual(page.errors, [`idsvc widget: forbidden: ${nasty}`]);
      assert.equal(page.context.__idsvc_widget_queue, undefined);
      assert.equal(page.appended.length, 0);
    }
  });
});
