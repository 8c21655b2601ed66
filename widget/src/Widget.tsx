import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { AddForm } from './AddForm.js';
import { EditForm } from './EditForm.js';
import { Favicon } from './Favicon.js';
import { fmt, languageOf, stringsFor, type Strings } from './i18n.js';
import { isHttpUrl } from './identity.js';
import { SyncForm } from './SyncForm.js';
import type { CatalogueEntry, WidgetBootConfig, WidgetService } from './types.js';
import { useCatalogue } from './useCatalogue.js';

type Mode = { kind: 'list' } | { kind: 'add' } | { kind: 'edit'; svcId: string };

/** Tells the page (which then calls update_service from its server); the widget never writes itself. */
function report(config: WidgetBootConfig, svcId: string, svcName: string, usrSvcId: string, url: string) {
  const callback = window.service_change_callback_idsvc;
  if (typeof callback !== 'function') return;
  try {
    callback(config.userIdentifier, svcId, svcName, usrSvcId, url);
  } catch (err) {
    console.error('idsvc widget: service_change_callback_idsvc threw', err);
  }
}

function Row({ service, index, t, onEdit, onRemove }: { service: WidgetService; index: number; t: Strings; onEdit(): void; onRemove(): void }) {
  const label = service.usrSvcId || service.url;
  const name = { name: service.svcName };
  return (
    <li class="item">
      <Favicon src={service.svcFavicon} name={service.svcName} />
      <div class="main">
        <span class="name">{service.svcName}</span>
        {service.verified && (
          <span class="badge">
            <span aria-hidden="true">✓</span> {t.verified}
          </span>
        )}
        <div class="ident">
          {isHttpUrl(service.url) ? (
            <a href={service.url} target="_blank" rel="noopener noreferrer">
              {label}
              <span class="sr"> {t.newTab}</span>
            </a>
          ) : (
            label
          )}
        </div>
      </div>
      <div class="actions">
        <button type="button" class="btn" data-f={`e${index}`} aria-label={fmt(t.changeLabel, name)} onClick={onEdit}>
          {t.change}
        </button>
        <button type="button" class="btn danger" aria-label={fmt(t.removeLabel, name)} onClick={onRemove}>
          {t.remove}
        </button>
      </div>
    </li>
  );
}

export function Widget({ config, idp }: { config: WidgetBootConfig; idp: string }) {
  const t = stringsFor(config.lang);
  const [services, setServices] = useState<WidgetService[]>(() => config.services.slice());
  const [mode, setMode] = useState<Mode>({ kind: 'list' });
  const [announcement, setAnnouncement] = useState('');
  const [catalogue, loadCatalogue] = useCatalogue(config.catalogueUrl);
  const rootRef = useRef<HTMLElement>(null);
  // Where keyboard focus goes after the next render (a data-f value), so it is never dropped. A layout
  // effect: a passive one still pending from an earlier render could run before the DOM changed.
  const focusNext = useRef<string | null>(null);

  useLayoutEffect(() => {
    const key = focusNext.current;
    const root = rootRef.current;
    if (!key || !root) return;
    focusNext.current = null;
    (root.querySelector<HTMLElement>(`[data-f="${key}"]`) ?? root.querySelector<HTMLElement>('[data-f="add"]'))?.focus();
  });

  const finish = (focus: string, message: string) => {
    focusNext.current = focus;
    setMode({ kind: 'list' });
    setAnnouncement(message);
  };

  const save = (entry: CatalogueEntry, usrSvcId: string, url: string) => {
    const index = services.findIndex((s) => s.svcId === entry.svcId);
    const old = services[index];
    if (old && old.usrSvcId === usrSvcId && old.url === url) return finish(`e${index}`, '');
    const updated: WidgetService = {
      svcId: entry.svcId,
      svcName: old ? old.svcName : entry.svcName,
      usrSvcId,
      url,
      verified: false, // a new identifier has not been proven yet
      svcFavicon: entry.svcFavicon || (old ? old.svcFavicon : ''),
    };
    setServices(old ? services.map((s, i) => (i === index ? updated : s)) : services.concat(updated));
    report(config, updated.svcId, updated.svcName, usrSvcId, url);
    const name = { name: updated.svcName };
    if (mode.kind === 'edit') finish(`e${index}`, fmt(t.changed, name));
    else finish('add', fmt(old ? t.changed : t.added, name));
  };

  const remove = (index: number) => {
    const gone = services[index];
    if (!gone) return;
    setServices(services.filter((_, i) => i !== index));
    report(config, gone.svcId, gone.svcName, '', '');
    finish(`e${Math.min(index, services.length - 2)}`, fmt(t.removed, { name: gone.svcName }));
  };

  return (
    <section
      ref={rootRef}
      class="w"
      lang={languageOf(config.lang)}
      dir="ltr"
      aria-labelledby={`${idp}title`}
      onPointerEnter={loadCatalogue}
      onFocusCapture={loadCatalogue}
    >
      <h2 id={`${idp}title`}>{t.title}</h2>
      {services.length ? (
        <ul aria-labelledby={`${idp}title`}>
          {services.map((service, index) =>
            mode.kind === 'edit' && mode.svcId === service.svcId ? (
              <li key={service.svcId} class="item editing">
                <Favicon src={service.svcFavicon} name={service.svcName} />
                <EditForm
                  id={`${idp}edit`}
                  service={service}
                  catalogue={catalogue}
                  onRetry={loadCatalogue}
                  t={t}
                  onSave={save}
                  onCancel={() => finish(`e${index}`, '')}
                />
              </li>
            ) : (
              <Row
                key={service.svcId}
                service={service}
                index={index}
                t={t}
                onEdit={() => {
                  loadCatalogue();
                  setMode({ kind: 'edit', svcId: service.svcId });
                }}
                onRemove={() => remove(index)}
              />
            ),
          )}
        </ul>
      ) : (
        <p class="empty">{t.empty}</p>
      )}
      {mode.kind === 'add' ? (
        <AddForm
          idp={idp}
          t={t}
          catalogue={catalogue}
          onRetry={loadCatalogue}
          added={new Set(services.map((s) => s.svcId))}
          current={new Map(services.map((s) => [s.svcId, s.usrSvcId || s.url]))}
          onAdd={save}
          onCancel={() => finish('add', '')}
        />
      ) : (
        <button
          type="button"
          class="btn add"
          data-f="add"
          onClick={() => {
            loadCatalogue();
            setMode({ kind: 'add' });
          }}
        >
          <span aria-hidden="true">+&nbsp;</span>
          {t.add}
        </button>
      )}
      <p class="sr" role="status" aria-live="polite">
        {announcement}
      </p>
      {config.displaySync && <SyncForm userIdentifier={config.userIdentifier} siteName={config.siteName} t={t} idp={idp} />}
      <p class="about">
        {fmt(t.about, { site: config.siteName })}{' '}
        {isHttpUrl(config.signUpUrl) && (
          <a href={config.signUpUrl} target="_blank" rel="noopener noreferrer">
            {fmt(t.signUp, { site: config.siteName })}
            <span class="sr"> {t.newTab}</span>
          </a>
        )}
      </p>
    </section>
  );
}
