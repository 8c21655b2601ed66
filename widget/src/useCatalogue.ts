import { useRef, useState } from 'preact/hooks';
import { loadCatalogue } from './identity.js';
import type { CatalogueEntry } from './types.js';

export type CatalogueState = { status: 'idle' | 'loading' | 'error' } | { status: 'ready'; entries: CatalogueEntry[] };

/** The catalogue is fetched only when the user is about to need it (hover, focus, add, change). */
export function useCatalogue(url: string): [CatalogueState, () => void] {
  const [state, setState] = useState<CatalogueState>({ status: 'idle' });
  const busy = useRef(false);
  const load = () => {
    if (busy.current) return;
    busy.current = true;
    setState((s) => (s.status === 'ready' ? s : { status: 'loading' }));
    loadCatalogue(url).then(
      (entries) => setState({ status: 'ready', entries }),
      (err: unknown) => {
        busy.current = false;
        console.error('idsvc widget: could not load the catalogue', err);
        setState({ status: 'error' });
      },
    );
  };
  return [state, load];
}

export function findEntry(state: CatalogueState, svcId: string): CatalogueEntry | null {
  return state.status === 'ready' ? (state.entries.find((e) => e.svcId === svcId) ?? null) : null;
}
