// Helpers for the site's tests: an app whose BASE_URL is its real address (so profile URLs,
// WebFinger hosts and rel="me" backlinks point at the running server), a small browser-like HTTP
// client with a cookie jar, local "remote profile" servers, and the log check.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { upsertServices } from '../../src/repositories/catalogue.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { lastMailTo, linkIn } from '../helpers/mailbox.js';
import { startServer, unusedPort, type LocalServer } from '../verification/servers.js';

export async function startSiteApp(env: Record<string, string> = {}): Promise<TestApp> {
  const port = await unusedPort();
  return startTestApp({ PORT: String(port), BASE_URL: `http://127.0.0.1:${port}`, ...env });
}

/** A catalogue entry whose profile pages live on a local server: `${origin}/{id}`. */
export async function addLocalService(t: TestApp, svcId: string, svcName: string, origin: string): Promise<void> {
  await t.ctx.db.write((w) =>
    upsertServices(
      w,
      [
        {
          svcId,
          svcName,
          svcURL: `${origin}/`,
          svcLeftURL: `${origin}/`,
          svcRightURL: '',
          svcMobileURL: '',
          svcIphoneURL: '',
          svcFavicon: `${origin}/favicon.ico`,
          svcIcon: `${origin}/apple-touch-icon.png`,
          svcIphoneIcon: `${origin}/apple-touch-icon.png`,
          regexCheck: null,
          urlBuilder: null,
          disabled: false,
        },
      ],
      t.clock.now(),
    ),
  );
}

/**
 * One catalogue entry per name, all served by one local server: "Site {name}", with profiles at
 * `${origin}/{name}/{id}`, so that every other page of that server is nobody's profile.
 */
export async function addSitesOnOneServer(t: TestApp, origin: string, names: readonly string[]): Promise<void> {
  await t.ctx.db.write((w) =>
    upsertServices(
      w,
      names.map((name) => ({
        svcId: name,
        svcName: `Site ${name}`,
        svcURL: `${origin}/`,
        svcLeftURL: `${origin}/${name}/`,
        svcRightURL: '',
        svcMobileURL: '',
        svcIphoneURL: '',
        svcFavicon: '',
        svcIcon: '',
        svcIphoneIcon: '',
        regexCheck: null,
        urlBuilder: null,
        disabled: false,
      })),
      t.clock.now(),
    ),
  );
}

export interface ProfilePages extends LocalServer {
  /** The HTML served at /{name}; change it at any time. */
  pages: Map<string, string>;
}

/** A "remote site" with one HTML page per user name, as a service's profile pages would be. */
export async function startProfilePages(): Promise<ProfilePages> {
  const pages = new Map<string, string>();
  const server = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const html = pages.get(decodeURIComponent((req.url ?? '/').slice(1)));
    res.writeHead(html === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html ?? 'not found');
  });
  return Object.assign(server, { pages });
}

export const pageWithBacklink = (profileUrl: string) =>
  `<!doctype html><html><head><title>Profile</title></head><body><h1>Me</h1><a rel="me nofollow" href="${profileUrl}">my identities</a></body></html>`;
export const pageWithoutBacklink = `<!doctype html><html><head><title>Profile</title></head><body><h1>Me</h1><a href="https://example.org/">a link</a></body></html>`;

/** A tiny browser: keeps cookies, follows nothing by itself, reads CSRF tokens out of forms. */
export class SiteClient {
  readonly cookies = new Map<string, string>();
  constructor(
    readonly baseUrl: string,
    readonly headers: Record<string, string> = {},
  ) {}

  private store(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<{ res: Response; body: string }> {
    const res = await fetch(this.baseUrl + path, { redirect: 'manual', headers: { ...this.headers, ...this.cookieHeader(), ...headers } });
    this.store(res);
    return { res, body: await res.text() };
  }

  async post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<{ res: Response; body: string }> {
    const res = await fetch(this.baseUrl + path, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams(fields),
      headers: { ...this.headers, ...this.cookieHeader(), ...headers },
    });
    this.store(res);
    return { res, body: await res.text() };
  }

  /** A JSON call, as the site's scripts make them; the body parsed when it is JSON. */
  async postJson(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ res: Response; json: Record<string, unknown> }> {
    const res = await fetch(this.baseUrl + path, {
      method: 'POST',
      redirect: 'manual',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...this.headers, ...this.cookieHeader(), ...headers },
    });
    this.store(res);
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // An HTML error page: the status says enough.
    }
    return { res, json };
  }

  /** The CSRF token of the first form on a page. */
  async csrf(path = '/login'): Promise<string> {
    let { res, body } = await this.get(path);
    // Logged in, the log-in and sign-up pages send you to your account: its forms carry the token.
    const location = res.headers.get('location');
    if (res.status === 303 && location) ({ body } = await this.get(location));
    const m = /name="_csrf" value="([^"]+)"/.exec(body);
    assert.ok(m, `no CSRF token on ${path}`);
    return m[1]!;
  }

  async signUp(fields: { email: string; user_id: string; password: string; opt_in?: boolean }): Promise<Response> {
    const { opt_in, ...rest } = fields;
    const { res } = await this.post('/signup', { _csrf: await this.csrf('/signup'), ...rest, ...(opt_in ? { opt_in: '1' } : {}) });
    return res;
  }

  async logIn(login: string, password: string): Promise<Response> {
    const { res } = await this.post('/login', { _csrf: await this.csrf('/login'), login, password });
    return res;
  }

  /** Posts a form of the account page with the session's CSRF token. */
  async submit(path: string, fields: Record<string, string> = {}): Promise<{ res: Response; body: string }> {
    return this.post(path, { _csrf: await this.csrf('/account'), ...fields });
  }
}

/** Opens a mailed link (a path) and presses its confirm button; the answer to that POST. */
export async function followMailedLink(client: SiteClient, link: string): Promise<{ res: Response; body: string }> {
  const page = await client.get(link);
  assert.equal(page.res.status, 200, `the link opens a page (${page.res.status})`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1];
  assert.ok(csrf && token, 'the page has a confirm form');
  return client.post('/confirm', { _csrf: csrf, token });
}

/**
 * A sign-up as a person makes it: the form, the "check your inbox" page, the link from the mail,
 * the confirm button, then logging in. The client ends logged in; returns the log-in answer.
 */
export async function signUpConfirmed(
  t: TestApp,
  client: SiteClient,
  fields: { email: string; user_id: string; password: string; opt_in?: boolean },
): Promise<Response> {
  const res = await client.signUp(fields);
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/signup/sent');
  const confirmed = await followMailedLink(client, linkIn(await lastMailTo(t, fields.email), '/confirm?token='));
  assert.equal(confirmed.res.status, 303, confirmed.body.slice(0, 300));
  return client.logIn(fields.email, fields.password);
}

/** The secrets a test used must not appear in any log line. */
export function assertLogsClean(t: TestApp, secrets: string[]): void {
  const all = t.logs.join('\n').toLowerCase();
  assert.ok(t.logs.length > 0, 'no log lines were captured');
  for (const s of secrets) {
    if (!s) continue;
    assert.equal(all.includes(s.toLowerCase()), false, `a log line contains a secret (${s.slice(0, 3)}…)`);
    const encoded = encodeURIComponent(s).toLowerCase();
    assert.equal(all.includes(encoded), false, `a log line contains a secret, URL-encoded (${s.slice(0, 3)}…)`);
  }
}
