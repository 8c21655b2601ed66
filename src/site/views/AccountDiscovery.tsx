// "Find my identities" on the account page: the start form, the progress of a
// running walk, and when it is done what it found, to tick and add.
import type { CatalogueEntry } from '../../catalogue/catalogue-file.js';
import type { DiscoveryPage } from '../../repositories/discovery.js';
import type { DiscoveryView } from '../../services/discovery.js';
import { CsrfField } from './fields.js';

export interface DiscoverySectionProps {
  view: DiscoveryView | null;
  csrf: string;
  services: ReadonlyMap<string, CatalogueEntry>;
  error?: string | undefined;
  url?: string | undefined;
}

const STOPPED_TEXT = {
  page_limit: 'It stopped at 25 pages; the pages it did not read are listed unread.',
  time_limit: 'It stopped after 30 seconds; the pages it did not read are listed unread.',
} as const;

function Proposal({ page, services, existing }: { page: DiscoveryPage; services: DiscoverySectionProps['services']; existing: ReadonlyMap<string, string> }) {
  const svc = page.svcId ? services.get(page.svcId) : undefined;
  if (page.kind !== 'identity' || !svc || page.usrSvcId === null) return null;
  const already = existing.get(svc.svcId) === page.usrSvcId;
  const id = `found-${page.id}`;
  return (
    <li class="found" data-found={svc.svcId} data-links-back={page.linksBack ? 'yes' : 'no'}>
      <input type="checkbox" name="page" value={String(page.id)} id={id} disabled={already} />{' '}
      <label for={id}>
        <strong>{svc.svcName}</strong>: {page.usrSvcId}
      </label>{' '}
      {already ? (
        <span class="badge muted">Already added</span>
      ) : page.linksBack ? (
        <span class="badge verified">Links back: added verified</span>
      ) : (
        <span class="badge muted">No link back: added unverified, then checked</span>
      )}
      <p class="hint">
        <a href={page.finalUrl ?? page.url} rel="noopener noreferrer nofollow">
          {page.url}
        </a>
      </p>
    </li>
  );
}

const pages = (n: number) => `${n} page${n === 1 ? '' : 's'}`;

function Results({ view, csrf, services }: { view: DiscoveryView; csrf: string; services: DiscoverySectionProps['services'] }) {
  const identities = view.pages.filter((p) => p.kind === 'identity' && p.svcId !== null && services.has(p.svcId));
  const others = view.pages.filter((p) => p.kind === 'homepage' || p.kind === 'ambiguous');
  // Every count below comes from this one list, so the summary and the list agree.
  const read = view.pages.filter((p) => p.outcome === 'fetched').length;
  const unreachable = view.pages.filter((p) => p.outcome === 'unreachable').length;
  const notTried = view.pages.length - read - unreachable;
  const start = view.pages.find((p) => p.depth === 0);
  if (start !== undefined && start.outcome !== 'fetched' && identities.length === 0) {
    // Nothing could be read, so there is nothing to report as found: say why, in the open.
    return (
      <div class="discovery-results" data-discovery-done data-discovery-failed>
        <p class="alert error" role="alert">
          Nothing could be read: {view.run.startUrl} could not be fetched ({start.detail}). So nothing was found. Check that the address is right and that the
          page is public, then try again.
        </p>
      </div>
    );
  }
  const counts = [`${pages(read)} read`, unreachable > 0 ? `${pages(unreachable)} could not be read` : '', notTried > 0 ? `${pages(notTried)} not read` : '']
    .filter((s) => s !== '')
    .join(', ');
  return (
    <div class="discovery-results" data-discovery-done>
      <p role="status">
        Done, from {view.run.startUrl}: {counts}. {view.run.stoppedBy ? STOPPED_TEXT[view.run.stoppedBy] : null}
      </p>
      {identities.length === 0 ? (
        <p class="empty">No profiles on services we know were found. Check that your page marks its links with rel="me".</p>
      ) : (
        <form method="post" action="/account/discover/add">
          <CsrfField token={csrf} />
          <input type="hidden" name="run_id" value={String(view.run.id)} />
          <fieldset>
            <legend>Tick the identities to add</legend>
            <ul class="found-list">
              {identities.map((p) => (
                <Proposal key={p.id} page={p} services={services} existing={view.existing} />
              ))}
            </ul>
          </fieldset>
          <button type="submit" class="button">
            Add ticked identities
          </button>
        </form>
      )}
      {others.length > 0 ? (
        <>
          <h3>Other pages found</h3>
          <ul class="found-list">
            {others.map((p) => (
              <li key={p.id} data-other={p.kind ?? ''}>
                {p.url} — {p.kind === 'ambiguous' ? 'fits several services; add it by hand' : 'a homepage, not a service we know'}
                {p.linksBack ? ' (links back to you)' : ''}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <details>
        <summary>
          Pages looked at ({view.pages.length}): {counts}
        </summary>
        <ul class="fetch-log">
          {view.pages.map((p) => (
            <li key={p.id} data-outcome={p.outcome}>
              {p.url}: {p.outcome === 'fetched' ? 'read' : p.outcome === 'unreachable' ? 'not reachable' : 'not read'} — {p.detail}
            </li>
          ))}
        </ul>
      </details>
    </div>
  );
}

export function DiscoverySection({ view, csrf, services, error, url }: DiscoverySectionProps) {
  const running = view !== null && view.run.status !== 'done';
  return (
    <section class="card" aria-labelledby="discover-title" id="discover">
      <h2 id="discover-title">Find my identities</h2>
      <p>
        Give one page you control: your homepage, or a profile on Mastodon or GitHub. We read its <code>rel="me"</code> links and follow them (two steps, at
        most 25 pages), then show what we found. Profiles that link back to you are added verified.
      </p>
      <form method="post" action="/account/discover" class="discover-form">
        <CsrfField token={csrf} />
        {error ? (
          <p class="field-error" id="discover-error" role="alert">
            {error}
          </p>
        ) : null}
        <label for="discover_url">Your page</label>
        <div class="input-row">
          <input
            id="discover_url"
            name="url"
            type="url"
            required
            maxLength={2048}
            placeholder="https://example.org/"
            value={url ?? ''}
            aria-invalid={error ? 'true' : undefined}
            aria-describedby={error ? 'discover-error' : undefined}
          />
          <button type="submit" class="button" disabled={running}>
            Find my identities
          </button>
        </div>
      </form>
      {running ? (
        <p role="status" aria-live="polite" data-discovery-poll="/account/discover/status">
          Looking… <span data-discovery-pages>{view.run.pagesFetched}</span> pages looked at so far. <a href="/account#discover">Refresh</a>
        </p>
      ) : view ? (
        <Results view={view} csrf={csrf} services={services} />
      ) : null}
    </section>
  );
}
