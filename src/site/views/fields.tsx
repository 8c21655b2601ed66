// Form controls with their label, hint and error tied together for screen readers.
import type { ComponentChildren } from 'preact';

export function CsrfField({ token }: { token: string }) {
  return <input type="hidden" name="_csrf" value={token} />;
}

interface TextFieldProps {
  name: string;
  label: string;
  value?: string | null;
  hint?: ComponentChildren;
  error?: string | undefined;
  type?: 'text' | 'email' | 'password' | 'url';
  autocomplete?: string;
  required?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  spellcheck?: boolean;
  id?: string;
  inputMode?: string;
  extra?: Record<string, string>;
}

export function TextField(p: TextFieldProps) {
  const id = p.id ?? p.name;
  const described = [p.hint ? `${id}-hint` : '', p.error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class={p.error ? 'field has-error' : 'field'}>
      <label for={id}>{p.label}</label>
      {p.hint ? (
        <p class="hint" id={`${id}-hint`}>
          {p.hint}
        </p>
      ) : null}
      {p.error ? (
        <p class="field-error" id={`${id}-error`}>
          {p.error}
        </p>
      ) : null}
      <input
        id={id}
        name={p.name}
        type={p.type ?? 'text'}
        value={p.value ?? ''}
        autocomplete={p.autocomplete}
        required={p.required}
        maxLength={p.maxLength}
        minLength={p.minLength}
        pattern={p.pattern}
        spellcheck={p.spellcheck}
        inputMode={p.inputMode as 'text' | undefined}
        aria-describedby={described}
        aria-invalid={p.error ? 'true' : undefined}
        {...(p.extra ?? {})}
      />
    </div>
  );
}

export function Checkbox(p: { name: string; label: ComponentChildren; checked?: boolean; hint?: ComponentChildren; id?: string; value?: string }) {
  const id = p.id ?? p.name;
  return (
    <div class="checkbox">
      <input type="checkbox" id={id} name={p.name} value={p.value ?? '1'} checked={p.checked} aria-describedby={p.hint ? `${id}-hint` : undefined} />
      <div>
        <label for={id}>{p.label}</label>
        {p.hint ? (
          <p class="hint" id={`${id}-hint`}>
            {p.hint}
          </p>
        ) : null}
      </div>
    </div>
  );
}
