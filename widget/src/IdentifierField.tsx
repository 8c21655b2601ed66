import type { Ref } from 'preact';
import { fmt, type Strings } from './i18n.js';
import { identifierProblem, patternHelp, profileUrl } from './identity.js';
import type { CatalogueEntry } from './types.js';

interface Props {
  id: string;
  entry: CatalogueEntry;
  value: string;
  onValue(value: string): void;
  /** Blocking problems are shown only once the user tried to save. */
  showErrors: boolean;
  t: Strings;
  inputRef: Ref<HTMLInputElement>;
}

/** The identifier input with a live preview of the profile URL it gives and a flag when it looks wrong. */
export function IdentifierField({ id, entry, value, onValue, showErrors, t, inputRef }: Props) {
  const url = profileUrl(entry, value);
  const problem = identifierProblem(entry, value);
  // Flagged while typing: an identifier that cannot give a URL, or one that fails the service's
  // pattern (saying what the pattern allows).
  const flag =
    url === null && (problem === 'mastodonFormat' || problem === 'websiteFormat' || problem === 'invalid')
      ? t[problem]
      : problem === 'pattern'
        ? `${fmt(t.patternWarning, { name: entry.svcName })} ${patternHelp(entry, t.lang, t.patternExample)}`.trim()
        : '';
  const error = showErrors && problem && problem !== 'pattern' && t[problem] !== flag ? t[problem] : '';
  const described = [url && `${id}-u`, flag && `${id}-w`, error && `${id}-e`].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{fmt(t.identifier, { name: entry.svcName })}</label>
      <input
        ref={inputRef}
        id={id}
        class="input"
        type="text"
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
        autocomplete="off"
        autocapitalize="none"
        spellcheck={false}
        aria-invalid={error || flag ? 'true' : 'false'}
        aria-describedby={described || undefined}
      />
      {url !== null && (
        <p id={`${id}-u`} class="note">
          {t.preview}: <span class="url">{url}</span>
        </p>
      )}
      {flag && (
        <p id={`${id}-w`} class="warn">
          {flag}
        </p>
      )}
      {error && (
        <p id={`${id}-e`} class="error">
          {error}
        </p>
      )}
    </div>
  );
}
