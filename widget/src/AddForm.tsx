import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { matchProfileUrl } from '../../src/catalogue/match-profile-url.js';
import { fmt, type Strings } from './i18n.js';
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
  /** What each service already holds (the name or URL shown), to ask before replacing it. */
  current: ReadonlyMap<string, string>;
  onAdd(entry: CatalogueEntry, usrSvcId: string, url: string): void;
  onCancel(): void;
}

export function AddForm({ idp, t, catalogue, onRetry, added, current, onAdd, onCancel }: Props) {
  const [entry, setEntry] = useState<CatalogueEntry | null>(null);
  const [value, setValue] = useState('');
  const [showErrors, setShowErrors] = useState(false);
  const pickerRef = useRef<HTMLInputElement>(null);
  const identRef = useRef<HTMLInputElement>(null);
  const noServiceId = `${idp}nosvc`;
  const [pasted, setPasted] = useState('');
  const [pasteNote, setPasteNote] = useState('');
  // Set once the user pressed Add on a service that already has an identity: the next Add replaces.
  const [asking, setAsking] = useState(false);
  useEffect(() => setAsking(false), [entry, value]);

  // A pasted profile URL picks the service and fills in the name; the user still presses Add.
  // Read once the catalogue is there (pasting asks for it, like focusing the picker does).
  useEffect(() => {
    if (pasted.trim() === '') return setPasteNote('');
    if (catalogue.status !== 'ready') {
      if (catalogue.status === 'idle') onRetry();
      return;
    }
    const found = matchProfileUrl(catalogue.entries, pasted, { orWebsite: true });
    if (found.kind === 'match') {
      const picked = catalogue.entries.find((e) => e.svcId === found.svcId);
      if (!picked) return;
      setEntry(picked);
      setValue(found.usrSvcId);
      setShowErrors(false);
      setPasteNote(fmt(t.pasteFound, { id: found.usrSvcId, name: picked.svcName }));
    } else {
      setPasteNote(found.kind === 'ambiguous' ? t.pasteAmbiguous : t.pasteUnknown);
    }
  }, [pasted, catalogue]);

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
    const old = current.get(entry.svcId);
    if (old !== undefined && old !== value.trim() && !asking) return setAsking(true);
    onAdd(entry, value.trim(), profileUrl(entry, value) ?? '');
  };
  const old = entry ? current.get(entry.svcId) : undefined;

  return (
    <form class="panel" noValidate aria-label={t.add} onSubmit={submit} onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
      <label for={`${idp}paste`}>{t.pasteUrl}</label>
      <input
        id={`${idp}paste`}
        type="url"
        class="input"
        value={pasted}
        placeholder="https://"
        autoComplete="off"
        spellcheck={false}
        aria-describedby={`${idp}pastenote`}
        onInput={(e) => setPasted((e.target as HTMLInputElement).value)}
      />
      <p id={`${idp}pastenote`} class="hint" aria-live="polite">
        {pasteNote}
      </p>
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
      {entry && <IdentifierField id={`${idp}ident`} entry={entry} value={value} onValue={setValue} showErrors={showErrors} t={t} inputRef={identRef} />}
      {asking && entry && old !== undefined && (
        <p class="warn" role="alert">
          {fmt(t.replaceAsk, { old, name: entry.svcName, new: value.trim() })}
        </p>
      )}
      <div class="row">
        <button type="submit" class="btn primary">
          {asking ? t.replaceButton : t.addButton}
        </button>
        <button type="button" class="btn" onClick={onCancel}>
          {t.cancel}
        </button>
      </div>
    </form>
  );
}
