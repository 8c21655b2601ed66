import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Strings } from './i18n.js';
import { IdentifierField } from './IdentifierField.js';
import { identifierProblem, profileUrl } from './identity.js';
import { Picker } from './Picker.js';
import type { CatalogueEntry } from './types.js';
import type { CatalogueState } from './useCatalogue.js';

interface Props {
  idp: string;
  t: Strings;
  catalogue: CatalogueState;
  onRetry(): void;
  added: ReadonlySet<string>;
  onAdd(entry: CatalogueEntry, usrSvcId: string, url: string): void;
  onCancel(): void;
}

export function AddForm({ idp, t, catalogue, onRetry, added, onAdd, onCancel }: Props) {
  const [entry, setEntry] = useState<CatalogueEntry | null>(null);
  const [value, setValue] = useState('');
  const [showErrors, setShowErrors] = useState(false);
  const pickerRef = useRef<HTMLInputElement>(null);
  const identRef = useRef<HTMLInputElement>(null);
  const noServiceId = `${idp}nosvc`;

  useLayoutEffect(() => {
    (entry ? identRef : pickerRef).current?.focus();
  }, [entry]);

  const submit = (e: Event) => {
    e.preventDefault();
    if (!entry || identifierProblem(entry, value)) {
      setShowErrors(true);
      (entry ? identRef : pickerRef).current?.focus();
      return;
    }
    onAdd(entry, value.trim(), profileUrl(entry, value) ?? '');
  };

  return (
    <form
      class="panel"
      noValidate
      aria-label={t.add}
      onSubmit={submit}
      onKeyDown={(e) => e.key === 'Escape' && onCancel()}
    >
      <Picker
        id={`${idp}svc`}
        t={t}
        catalogue={catalogue}
        onRetry={onRetry}
        added={added}
        selected={entry}
        onPick={(picked) => {
          setEntry(picked);
          setShowErrors(false);
        }}
        inputRef={pickerRef}
        errorId={showErrors && !entry ? noServiceId : null}
      />
      {showErrors && !entry && (
        <p id={noServiceId} class="error">
          {t.chooseService}
        </p>
      )}
      {entry && (
        <IdentifierField
          id={`${idp}ident`}
          entry={entry}
          value={value}
          onValue={setValue}
          showErrors={showErrors}
          t={t}
          inputRef={identRef}
        />
      )}
      <div class="row">
        <button type="submit" class="btn primary">
          {t.addButton}
        </button>
        <button type="button" class="btn" onClick={onCancel}>
          {t.cancel}
        </button>
      </div>
    </form>
  );
}
