export type SyncOutcome = { ok: true } | { ok: false; code: string; message: string };

const OK: SyncOutcome = { ok: true };

function failure(code: unknown = '', message: unknown = ''): SyncOutcome {
  return { ok: false, code: String(code ?? ''), message: String(message ?? '') };
}

function fromObject(o: Record<string, unknown>): SyncOutcome {
  if (o.result === true || (typeof o.result === 'string' && o.result.trim().toLowerCase() === 'true')) return OK;
  const error = o.error && typeof o.error === 'object' ? (o.error as Record<string, unknown>) : o;
  return failure(error.code, error.message);
}

function fromXml(xml: string): SyncOutcome {
  const doc = new DOMParser().parseFromString(xml, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length) return failure();
  const root = doc.documentElement;
  if (root.nodeName === 'result') return (root.textContent ?? '').trim().toLowerCase() === 'true' ? OK : failure();
  const error = root.nodeName === 'error' ? root : root.getElementsByTagName('error')[0];
  const field = (name: string) => (error?.getElementsByTagName(name)[0]?.textContent ?? '').trim();
  return failure(field('code'), field('message'));
}

/**
 * Reads what a partner passes to handle_sync_results_idsvc: the body of a sync_user answer as XML
 * or JSON text, the string "true", `true`, or an already parsed JSON answer.
 */
export function parseSyncResult(input: unknown): SyncOutcome {
  if (input === true) return OK;
  if (input && typeof input === 'object') return fromObject(input as Record<string, unknown>);
  if (typeof input !== 'string') return failure();
  const body = input.trim();
  if (body.toLowerCase() === 'true') return OK;
  if (body.startsWith('<')) return fromXml(body);
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed !== null && typeof parsed === 'object') return fromObject(parsed as Record<string, unknown>);
    return parsed === true || parsed === 'true' ? OK : failure();
  } catch {
    return failure();
  }
}
