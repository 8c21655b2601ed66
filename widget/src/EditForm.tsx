import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { fmt, type Strings } from './i18n.js';
import { IdentifierField } from './IdentifierField.js';
import { identifierFromUrl, identifierProblem, profileUrl } from './identity.js';
import type { CatalogueEntry, WidgetService } from './types.js';
import { findEntry, type CatalogueState } from './useCatalogue.js';

interface Props {
  id: string;
  service: WidgetService;
  catalogue: CatalogueState;
  onRetry(): void;
  t: Strings;
  onSave(entry: CatalogueEntry, usrSvcId: string, url: string): void;
  onCancel(): void;
}

export function EditForm({ id, service, catalogue, onRetry, t, onSave, onCancel }: Props) {
  const entry = findEntry(catalogue, service.svcId);
  // Until the user types, the field shows the current identifier (read back from the URL when the
  // view did not include it).
  const [typed, setTyped] = useState<string | null>(null);
  const value = typed ?? service.usrSvcId ?? (entry ? identifierFromUrl(entry, service.url) : '');
  const [showErrors, setShowErrors] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);

  useLayoutEffect(() => {
    (inputRef.current ?? cancelRef.current)?.focus();
  }, [entry !== null]);

  const submit = (e: Event) => {
    e.preventDefault();
    if (!entry) return;
    if (identifierProblem(entry, value)) {
      setShowErrors(true);
      inputRef.current?.focus();
      return;
    }
    onSave(entry, value.trim(), profileUrl(entry, value) ?? '');
  };

  return (
    <form
      class="main"
      noValidate
      aria-label={fmt(t.changeLabel, { name: service.svcName })}
      onSubmit={submit}
      onKeyDown={(e) => e.key === 'Escape' && onCancel()}
    >
      <div class="name">{service.svcName}</div>
      {entry ? (
        <IdentifierField id={id} entry={entry} value={value} onValue={setTyped} showErrors={showErrors} t={t} inputRef={inputRef} />
      ) : catalogue.status === 'ready' ? (
        <p class="note">{fmt(t.unavailable, { name: service.svcName })}</p>
      ) : catalogue.status === 'error' ? (
        <p class="error">
          {t.loadFailed}{' '}
          <button type="button" class="btn link" onClick={onRetry}>
            {t.retry}
          </button>
        </p>
      ) : (
        <p class="note" role="status">
          {t.loading}
        </p>
      )}
      <div class="row">
        {entry && (
          <button type="submit" class="btn primary">
            {t.save}
          </button>
        )}
        <button ref={cancelRef} type="button" class="btn" onClick={onCancel}>
          {t.cancel}
        </button>
      </div>
    </form>
  );
}
