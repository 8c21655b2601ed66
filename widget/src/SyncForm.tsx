import { useEffect, useRef, useState } from 'preact/hooks';
import { fmt, type Strings } from './i18n.js';
import { parseSyncResult, type SyncOutcome } from './sync-result.js';

interface SyncTarget {
  show(outcome: SyncOutcome): void;
}

// Every mounted sync form on the page, and the one whose user last pressed "Sync".
const targets = new Set<SyncTarget>();
let lastStarted: SyncTarget | null = null;

/** window.handle_sync_results_idsvc: the page passes the sync_user answer it got from its server. */
export function handleSyncResults(result: unknown): boolean {
  const outcome = parseSyncResult(result);
  const recipients = lastStarted && targets.has(lastStarted) ? [lastStarted] : Array.from(targets);
  for (const target of recipients) target.show(outcome);
  return outcome.ok;
}

type Status = { kind: '' | 'pending' | 'ok' | 'bad'; text: string };

export function SyncForm({ userIdentifier, siteName, t, idp }: { userIdentifier: string; siteName: string; t: Strings; idp: string }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [status, setStatus] = useState<Status>({ kind: '', text: '' });
  const self = useRef<SyncTarget | null>(null);

  useEffect(() => {
    const target: SyncTarget = {
      show(outcome) {
        setPassword('');
        if (outcome.ok) setStatus({ kind: 'ok', text: t.syncOk });
        else setStatus({ kind: 'bad', text: outcome.message ? fmt(t.syncFailed, { msg: outcome.message }) : t.syncFailedGeneric });
      },
    };
    self.current = target;
    targets.add(target);
    return () => {
      targets.delete(target);
    };
  }, [t]);

  const submit = (e: Event) => {
    e.preventDefault();
    const init = window.init_sync_user_idsvc;
    if (!email.trim() || !password) return setStatus({ kind: 'bad', text: t.syncMissing });
    if (typeof init !== 'function') return setStatus({ kind: 'bad', text: t.syncUnavailable });
    lastStarted = self.current;
    setStatus({ kind: 'pending', text: t.syncing });
    try {
      init(userIdentifier, email.trim(), password);
    } catch (err) {
      console.error('idsvc widget: init_sync_user_idsvc threw', err);
      setStatus({ kind: 'bad', text: t.syncFailedGeneric });
    }
  };

  // No `name` attributes: should a script ever fail, the browser has nothing to submit.
  return (
    <form class="sync" onSubmit={submit} noValidate aria-labelledby={`${idp}sync`}>
      <h3 id={`${idp}sync`}>{fmt(t.syncTitle, { site: siteName })}</h3>
      <div class="grid">
        <div class="field">
          <label for={`${idp}email`}>{t.email}</label>
          <input
            id={`${idp}email`}
            class="input"
            type="email"
            autocomplete="email"
            spellcheck={false}
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for={`${idp}pw`}>{t.password}</label>
          <input
            id={`${idp}pw`}
            class="input"
            type="password"
            autocomplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </div>
      </div>
      <button type="submit" class="btn primary">
        {t.syncButton}
      </button>
      <p class={`status ${status.kind}`} role="status" aria-live="polite">
        {status.text}
      </p>
    </form>
  );
}
