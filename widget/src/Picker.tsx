import type { Ref } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Favicon } from './Favicon.js';
import type { Strings } from './i18n.js';
import { filterCatalogue } from './identity.js';
import type { CatalogueEntry } from './types.js';
import type { CatalogueState } from './useCatalogue.js';

interface Props {
  id: string;
  t: Strings;
  catalogue: CatalogueState;
  onRetry(): void;
  /** svcIds the user already has: marked in the list (picking one changes it). */
  added: ReadonlySet<string>;
  selected: CatalogueEntry | null;
  onPick(entry: CatalogueEntry | null): void;
  inputRef: Ref<HTMLInputElement>;
  errorId: string | null;
}

/**
 * A service picker following the ARIA combobox pattern with list autocomplete: typing filters by
 * name, ArrowDown/ArrowUp move through the suggestions, Enter picks, Escape closes (then clears).
 */
export function Picker({ id, t, catalogue, onRetry, added, selected, onPick, inputRef, errorId }: Props) {
  const [query, setQuery] = useState(selected ? selected.svcName : '');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const listRef = useRef<HTMLUListElement>(null);
  const entries = catalogue.status === 'ready' ? catalogue.entries : null;
  const matches = useMemo(() => (entries ? filterCatalogue(entries, query) : []), [entries, query]);
  const listId = `${id}-lb`;
  const optionId = (i: number) => `${id}-o${i}`;
  const shown = open && matches.length > 0;

  // A service picked from outside (a pasted profile URL) shows in the box like one picked here.
  useEffect(() => {
    if (selected) setQuery(selected.svcName);
  }, [selected]);

  useEffect(() => {
    // Keep the active option visible without scrolling the page around the widget.
    const list = listRef.current;
    const option = list && active >= 0 ? (list.children[active] as HTMLElement | undefined) : undefined;
    if (!list || !option) return;
    if (option.offsetTop < list.scrollTop) list.scrollTop = option.offsetTop;
    else if (option.offsetTop + option.offsetHeight > list.scrollTop + list.clientHeight)
      list.scrollTop = option.offsetTop + option.offsetHeight - list.clientHeight;
  }, [active, shown]);

  const close = () => {
    setOpen(false);
    setActive(-1);
  };
  const choose = (entry: CatalogueEntry) => {
    setQuery(entry.svcName);
    close();
    onPick(entry);
  };
  const move = (step: number) => {
    if (!open) setOpen(true);
    const n = matches.length;
    if (!n) return;
    if (!open || active < 0) setActive(step > 0 ? 0 : n - 1);
    else setActive((active + step + n) % n);
  };

  const onKeyDown = (e: KeyboardEvent) => {
    switch (e.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        e.preventDefault();
        move(e.key === 'ArrowDown' ? 1 : -1);
        break;
      case 'Enter':
        if (shown) {
          e.preventDefault();
          choose(matches[Math.max(active, 0)] as CatalogueEntry);
        }
        break;
      case 'Escape':
        if (open) {
          e.preventDefault();
          e.stopPropagation();
          close();
        } else if (query) {
          e.stopPropagation();
          setQuery('');
          if (selected) onPick(null);
        }
        break;
      case 'Tab':
        close();
        break;
    }
  };

  return (
    <div class="field">
      <label for={id}>{t.service}</label>
      <input
        ref={inputRef}
        id={id}
        class="input"
        type="text"
        role="combobox"
        aria-autocomplete="list"
        aria-expanded={shown ? 'true' : 'false'}
        aria-controls={listId}
        aria-activedescendant={shown && active >= 0 ? optionId(active) : undefined}
        aria-invalid={errorId ? 'true' : 'false'}
        aria-describedby={errorId ?? undefined}
        autocomplete="off"
        autocapitalize="none"
        spellcheck={false}
        placeholder={t.search}
        value={query}
        onInput={(e) => {
          setQuery(e.currentTarget.value);
          setOpen(true);
          setActive(-1);
          if (selected) onPick(null);
        }}
        onKeyDown={onKeyDown}
        onClick={() => setOpen(true)}
        onBlur={close}
      />
      <ul
        ref={listRef}
        id={listId}
        role="listbox"
        aria-label={t.services}
        class="listbox"
        hidden={!shown}
        // Keep focus in the input while the pointer picks an option or drags the scrollbar.
        onMouseDown={(e) => e.preventDefault()}
      >
        {shown &&
          matches.map((entry, i) => (
            <li key={entry.svcId} id={optionId(i)} role="option" aria-selected={i === active ? 'true' : 'false'} class="opt" onClick={() => choose(entry)}>
              <Favicon src={entry.svcFavicon} name={entry.svcName} />
              <span>{entry.svcName}</span>
              {added.has(entry.svcId) && <span class="hint">{t.alreadyAdded}</span>}
            </li>
          ))}
      </ul>
      {open && catalogue.status === 'loading' && (
        <p class="note" role="status">
          {t.loading}
        </p>
      )}
      {open && entries && !matches.length && (
        <p class="note" role="status">
          {t.noMatches}
        </p>
      )}
      {catalogue.status === 'error' && (
        <p class="error">
          {t.loadFailed}{' '}
          <button type="button" class="btn link" onClick={onRetry}>
            {t.retry}
          </button>
        </p>
      )}
    </div>
  );
}
