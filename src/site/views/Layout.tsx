// The frame of every page: head (stylesheet, icon, enhancement script), header with navigation,
// main content, footer. Pages pass only what differs.
import type { ComponentChildren, VNode } from 'preact';
import { render } from 'preact-render-to-string';
import { ASSETS } from '../assets.js';

export interface Viewer {
  userId: string;
  csrf: string;
}

export interface LayoutProps {
  title: string;
  viewer?: Viewer | null;
  description?: string;
  /** Extra elements for <head> (the public profile's rel="me" links). */
  head?: ComponentChildren;
  /** Narrow pages (forms) read better in a single column. */
  narrow?: boolean;
  children: ComponentChildren;
}

export function Layout(p: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${p.title} · idsvc`}</title>
        <meta
          name="description"
          content={p.description ?? 'Keep all your online identities in one place, prove them with rel="me", and share them only when you choose.'}
        />
        <meta name="color-scheme" content="light dark" />
        <link rel="stylesheet" href={ASSETS.css.url} />
        <link rel="icon" href={ASSETS.icon.url} type="image/svg+xml" />
        {p.head}
        <script src={ASSETS.js.url} defer />
      </head>
      <body>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <header class="site-header">
          <div class="wrap header-row">
            <a class="brand" href="/">
              <img src={ASSETS.icon.url} alt="" width={28} height={28} />
              <span>idsvc</span>
            </a>
            <nav aria-label="Main">
              <ul class="nav-list">
                {p.viewer ? (
                  <>
                    <li>
                      <a href="/account">Your account</a>
                    </li>
                    <li>
                      <a href={`/u/${p.viewer.userId}`}>Public profile</a>
                    </li>
                    <li>
                      <form method="post" action="/logout" class="inline-form">
                        <input type="hidden" name="_csrf" value={p.viewer.csrf} />
                        <button type="submit" class="button ghost small">
                          Log out
                        </button>
                      </form>
                    </li>
                  </>
                ) : (
                  <>
                    <li>
                      <a href="/login">Log in</a>
                    </li>
                    <li>
                      <a class="button small" href="/signup">
                        Sign up
                      </a>
                    </li>
                  </>
                )}
              </ul>
            </nav>
          </div>
        </header>
        <main id="main" class={p.narrow ? 'wrap narrow' : 'wrap'} tabIndex={-1}>
          {p.children}
        </main>
        <footer class="site-footer">
          <div class="wrap">
            <p>
              idsvc keeps a person's online identities in one place. Nothing about you is shown to anyone until you opt in, and you can take it all back at any
              time.
            </p>
          </div>
        </footer>
      </body>
    </html>
  );
}

export function renderDocument(page: VNode): string {
  return `<!doctype html>${render(page)}`;
}

export function ErrorSummary({ errors }: { errors: Record<string, string> }) {
  const entries = Object.entries(errors);
  if (entries.length === 0) return null;
  return (
    <div class="alert error" role="alert" aria-labelledby="error-summary-title" tabIndex={-1} data-autofocus>
      <h2 id="error-summary-title">{entries.length === 1 ? 'There is a problem' : 'There are some problems'}</h2>
      <ul>
        {entries.map(([field, message]) => (
          <li key={field}>{field === 'form' ? message : <a href={`#${field}`}>{message}</a>}</li>
        ))}
      </ul>
    </div>
  );
}

export function Notice({ kind, children }: { kind: 'success' | 'info' | 'error'; children: ComponentChildren }) {
  return (
    <div class={`alert ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

export function When({ ms }: { ms: number }) {
  const iso = new Date(ms).toISOString();
  return <time datetime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>;
}

export function Day({ ms }: { ms: number }) {
  const d = new Date(ms);
  return <time datetime={d.toISOString()}>{d.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' })}</time>;
}
